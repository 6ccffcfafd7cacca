package dev.keel.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Keeps {@code docs/locks.md} complete: every lock the kernel declares (a field made with
 * {@code new ReentrantLock}, or an object some {@code synchronized} block locks) is named on the
 * page as {@code `Class.field`}; a lock declared inside a method (an anonymous class) is named by
 * that method, {@code `Class.method`}. The page's other claims (the order, the argument for each
 * edge) it cannot check: a new lock found here is the sign that they need a look. The second test
 * is the mutant: a kernel with two locks the page does not name.
 */
class LocksPageTest {

    private static final Path DOCS = Path.of(System.getProperty("keel.docs.dir", "../docs"));
    private static final Path ROOT = DOCS.resolve("..").toAbsolutePath().normalize();

    private static final Pattern NEW_LOCK = Pattern.compile("^(\\s*).*\\bReentrantLock\\s+(\\w+)\\s*=\\s*new ReentrantLock\\(");
    private static final Pattern SYNCHRONIZED = Pattern.compile("\\bsynchronized\\s*\\(\\s*(\\w+)\\s*\\)");
    private static final Pattern METHOD = Pattern.compile("^\\s*(?:[\\w<>\\[\\]?,]+\\s+)+(\\w+)\\([^)]*\\)\\s*(?:throws [\\w., ]+)?\\{");

    @Test
    void locksMdNamesEveryLockOfTheKernel() {
        assertEquals(List.of(), unnamed(ROOT.resolve("kernel/src/main/java"), ROOT.resolve("docs/locks.md")),
                "locks of the kernel that docs/locks.md does not name");
    }

    @Test
    void aLockThePageDoesNotNameIsReported(@TempDir Path repo) throws IOException {
        Path sources = repo.resolve("kernel/src/main/java/dev/keel");
        Files.createDirectories(sources);
        Files.writeString(sources.resolve("Arena.java"), String.join("\n",
                "final class Arena {",
                "    private final ReentrantLock closeLock = new ReentrantLock();",
                "    private final ReentrantLock extra = new ReentrantLock();",
                "    private final Object guard = new Object();",
                "    void grow() {",
                "        synchronized (guard) {",
                "        }",
                "    }",
                "    static Lock make() {",
                "        return new Lock() {",
                "            private final ReentrantLock inner = new ReentrantLock(true);",
                "        };",
                "    }",
                "}"));
        Path page = repo.resolve("docs/locks.md");
        Files.createDirectories(page.getParent());
        Files.writeString(page, "`Arena.closeLock` and `Arena.make`; extra and guard are not named.\n");
        assertEquals(List.of("Arena.extra", "Arena.guard"), unnamed(repo.resolve("kernel/src/main/java"), page));
    }

    /** The kernel's locks, as {@code Class.field} (or {@code Class.method}), that {@code page} names nowhere. */
    static List<String> unnamed(Path sources, Path page) {
        try {
            String text = Files.readString(page);
            List<String> missing = new ArrayList<>();
            List<Path> files;
            try (Stream<Path> walk = Files.walk(sources)) {
                files = walk.filter(p -> p.toString().endsWith(".java")).sorted().toList();
            }
            for (Path file : files) {
                String type = file.getFileName().toString().replace(".java", "");
                List<String> lines = Files.readAllLines(file);
                List<String> names = new ArrayList<>();
                for (int i = 0; i < lines.size(); i++) {
                    Matcher lock = NEW_LOCK.matcher(lines.get(i));
                    if (lock.find()) {
                        names.add(lock.group(1).length() > 4 ? enclosingMethod(lines, i) : lock.group(2));
                    }
                    Matcher sync = SYNCHRONIZED.matcher(lines.get(i).replaceFirst("//.*|^\\s*\\*.*", ""));
                    if (sync.find() && !sync.group(1).equals("this") && !names.contains(sync.group(1))) {
                        names.add(sync.group(1));
                    }
                }
                for (String name : names) {
                    if (!text.contains("`" + type + "." + name + "`")) {
                        missing.add(type + "." + name);
                    }
                }
            }
            return missing;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String enclosingMethod(List<String> lines, int from) {
        for (int i = from - 1; i >= 0; i--) {
            Matcher method = METHOD.matcher(lines.get(i));
            if (method.find() && !lines.get(i).contains("new ")) {
                return method.group(1);
            }
        }
        return "?";
    }
}
