package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps the code in {@code docs/embedding.md} and {@code README.md} identical to the examples that
 * this module compiles and runs. Each code block of the page is preceded by a comment
 * {@code <!-- example: examples/src/test/java/.../File.java#name -->}; the block must equal the
 * region between {@code // tag::name[]} and {@code // end::name[]} in that file, with the common
 * indentation removed and nested tag lines left out. A page block without such a comment, a
 * comment without a block, an unknown file or tag, and any difference fail the test, which then
 * prints the region as it should appear in the page.
 */
class EmbeddingDocTest {

    private static final Pattern EXAMPLE = Pattern.compile(
            "<!-- example: ([^#\\s]+)#([\\w-]+) -->\\n```java\\n(.*?)```\\n", Pattern.DOTALL);
    private static final Pattern JAVA_BLOCK = Pattern.compile("```java\\n");
    private static final Pattern TAG_LINE = Pattern.compile("^\\s*// (tag|end)::[\\w-]+\\[]\\s*$");

    private static final Path DOCS = Path.of(System.getProperty("keel.docs.dir", "../docs"));
    private static final Path ROOT = DOCS.resolve("..");

    @Test
    void everyCodeBlockOfTheEmbeddingPageIsAnExampleThatTheBuildRuns() throws IOException {
        checkPage(DOCS.resolve("embedding.md"), 6);
    }

    @Test
    void theReadmesJavaExampleIsOneThatTheBuildRuns() throws IOException {
        checkPage(ROOT.resolve("README.md"), 1);
    }

    /** Proves the page check can fail: a block that differs from its region by one character. */
    @Test
    void aBlockThatDiffersFromItsRegionIsReported(@TempDir Path dir) throws IOException {
        String readme = Files.readString(ROOT.resolve("README.md"), StandardCharsets.UTF_8);
        Path page = dir.resolve("page.md");
        Files.writeString(page, readme.replaceFirst("liveCount\\(\\)", "liveCount( )"));
        AssertionError mutant = assertThrows(AssertionError.class,
                () -> checkPage(page, ROOT, 1));
        assertTrue(mutant.getMessage().contains("differs from the page"), mutant.getMessage());
    }

    private static void checkPage(Path file, int minimum) throws IOException {
        checkPage(file, ROOT, minimum);
    }

    private static void checkPage(Path file, Path root, int minimum) throws IOException {
        String page = Files.readString(file, StandardCharsets.UTF_8);
        Matcher examples = EXAMPLE.matcher(page);
        List<String> problems = new ArrayList<>();
        int shown = 0;
        while (examples.find()) {
            shown++;
            Path source = root.resolve(examples.group(1));
            String tag = examples.group(2);
            if (!Files.isRegularFile(source)) {
                problems.add(examples.group(1) + ": no such file");
                continue;
            }
            String region = region(Files.readString(source, StandardCharsets.UTF_8), tag);
            if (region == null) {
                problems.add(examples.group(1) + ": no region " + tag);
            } else if (!region.equals(examples.group(3))) {
                problems.add(examples.group(1) + "#" + tag + " differs from the page; the page should show:\n" + region);
            }
        }
        long javaBlocks = JAVA_BLOCK.matcher(page).results().count();
        if (javaBlocks != shown) {
            problems.add((javaBlocks - shown) + " java block(s) of " + file.getFileName() + " have no '<!-- example: file#tag -->'"
                    + " line just before them");
        }
        if (!problems.isEmpty()) {
            fail(file + " is out of step with the examples:\n" + String.join("\n\n", problems));
        }
        assertTrue(shown >= minimum, "the page shows the examples (" + shown + ")");
    }

    @Test
    void aRegionIsTheTaggedLinesWithoutTheirCommonIndentation() {
        String source = """
                class A {
                    // tag::outer[]
                    void f() {
                        // tag::inner[]
                        g();
                        // end::inner[]
                    }
                    // end::outer[]
                }
                """;
        assertEquals("void f() {\n    g();\n}\n", region(source, "outer"));
        assertEquals("g();\n", region(source, "inner"));
        assertEquals(null, region(source, "missing"));
    }

    /** The lines between the tag's start and end markers, dedented; null if the tag is absent. */
    static String region(String source, String tag) {
        List<String> lines = source.lines().toList();
        int start = lines.indexOf(lines.stream().filter(l -> l.strip().equals("// tag::" + tag + "[]"))
                .findFirst().orElse(null));
        int end = lines.indexOf(lines.stream().filter(l -> l.strip().equals("// end::" + tag + "[]"))
                .findFirst().orElse(null));
        if (start < 0 || end < start) {
            return null;
        }
        List<String> body = lines.subList(start + 1, end).stream()
                .filter(l -> !TAG_LINE.matcher(l).matches()).toList();
        int indent = body.stream().filter(l -> !l.isBlank())
                .mapToInt(l -> l.length() - l.stripLeading().length()).min().orElse(0);
        StringBuilder out = new StringBuilder();
        body.forEach(l -> out.append(l.isBlank() ? "" : l.substring(indent)).append('\n'));
        return out.toString();
    }
}
