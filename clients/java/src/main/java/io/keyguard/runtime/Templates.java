package io.keyguard.runtime;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * Matches keys against the registry's key templates (the syntax of
 * keyguard.yaml: {@code {name}}, {@code {name:int}}, {@code {name:enum(A,B)}},
 * doubled braces for literal ones), for interceptors that see keys as plain
 * strings. Where several templates match, the one with more literal text
 * wins (a registry that lints clean has no overlapping templates).
 */
public final class Templates {
    private Templates() {}

    private static final class Entry {
        final String template;
        final Pattern pattern;
        final int literal;

        Entry(String template, Pattern pattern, int literal) {
            this.template = template;
            this.pattern = pattern;
            this.literal = literal;
        }
    }

    /** A function from a key to the text of the template it matches, or null. */
    public static Function<String, String> matcher(Collection<String> templates, char separator) {
        List<Entry> entries = new ArrayList<>();
        for (String t : templates) {
            entries.add(compile(t, separator));
        }
        return key -> {
            Entry best = null;
            for (Entry e : entries) {
                if (e.pattern.matcher(key).matches() && (best == null || e.literal > best.literal)) {
                    best = e;
                }
            }
            return best == null ? null : best.template;
        };
    }

    static Entry compile(String t, char sep) {
        StringBuilder re = new StringBuilder();
        StringBuilder lit = new StringBuilder();
        int literal = 0;
        String notSep = "[^" + Pattern.quote(String.valueOf(sep)) + "]+";
        for (int i = 0; i < t.length(); i++) {
            char c = t.charAt(i);
            if ((c == '{' || c == '}') && i + 1 < t.length() && t.charAt(i + 1) == c) {
                lit.append(c);
                i++;
                continue;
            }
            if (c != '{') {
                lit.append(c);
                continue;
            }
            int end = t.indexOf('}', i);
            if (end < 0) {
                throw new IllegalArgumentException("keyguard: template \"" + t + "\": unclosed placeholder at " + i);
            }
            literal += lit.length();
            re.append(Pattern.quote(lit.toString()));
            lit.setLength(0);
            String ph = t.substring(i + 1, end);
            int colon = ph.indexOf(':');
            String kind = colon < 0 ? "any" : ph.substring(colon + 1);
            re.append('(').append(kindPattern(kind, notSep)).append(')');
            i = end;
        }
        literal += lit.length();
        if (lit.length() > 0) {
            re.append(Pattern.quote(lit.toString()));
        }
        return new Entry(t, Pattern.compile(re.toString(), Pattern.DOTALL), literal);
    }

    private static String kindPattern(String kind, String notSep) {
        switch (kind) {
            case "int":
                return "-?[0-9]+";
            case "hex":
                return "[0-9a-fA-F]+";
            case "uuid":
                return "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
            case "region":
                return "[1-9][0-9]{5}";
            case "date":
                return "[0-9]{4}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])";
            case "hash":
                return "[0-9a-f]{16}";
            default:
                if (kind.startsWith("enum(") && kind.endsWith(")")) {
                    List<String> alts = new ArrayList<>();
                    for (String v : kind.substring(5, kind.length() - 1).split(",")) {
                        alts.add(Pattern.quote(v.trim()));
                    }
                    return "(?:" + String.join("|", alts) + ")";
                }
                return notSep;
        }
    }
}
