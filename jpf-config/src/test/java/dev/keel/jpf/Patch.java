package dev.keel.jpf;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One edit of a kernel source file: replace the only occurrence of {@code snippet} with
 * {@code replacement}. The snippet is matched token by token with any whitespace between tokens,
 * so re-indenting the kernel does not break a mutant, but any real change to the anchored code
 * does: a snippet found zero times or more than once fails the mutant loudly instead of letting
 * it test an unchanged kernel.
 */
record Patch(String file, String snippet, String replacement) {

    /** {@code source} with the snippet replaced; throws {@link IllegalStateException} unless it occurs exactly once. */
    String applyTo(String source) {
        Matcher m = pattern().matcher(source);
        if (!m.find()) {
            throw new IllegalStateException("mutant anchor not found in " + file + " (the kernel changed; update the mutant): "
                    + snippet);
        }
        int start = m.start();
        int end = m.end();
        if (m.find()) {
            throw new IllegalStateException("mutant anchor occurs more than once in " + file
                    + " (make it longer): " + snippet);
        }
        return source.substring(0, start) + replacement + source.substring(end);
    }

    private Pattern pattern() {
        List<String> quoted = new ArrayList<>();
        for (String token : snippet.trim().split("\\s+")) {
            quoted.add(Pattern.quote(token));
        }
        // Not inside a longer name: "lock.unlock()" must not match "flight.unlock()".
        return Pattern.compile("(?<![\\w.])" + String.join("\\s+", quoted));
    }
}
