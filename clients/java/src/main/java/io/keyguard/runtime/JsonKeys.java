package io.keyguard.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * The top-level keys of a JSON object, for the check of a template's declared
 * fields: {@link #of} validates the whole text as JSON (RFC 8259, white space
 * around it allowed) without building its values, and returns the object's
 * keys, unescaped, in order; null when the text is not exactly one JSON
 * object. Nesting is followed to 256 levels; deeper is not taken for JSON.
 */
final class JsonKeys {
    private static final int MAX_DEPTH = 256;
    private final String s;
    private int i;

    private JsonKeys(String s) {
        this.s = s;
    }

    static List<String> of(String text) {
        if (text == null) {
            return null;
        }
        JsonKeys p = new JsonKeys(text);
        List<String> keys = new ArrayList<>();
        p.space();
        if (!p.eat('{') || !p.members(1, keys)) {
            return null;
        }
        p.space();
        return p.i == text.length() ? keys : null;
    }

    private void space() {
        while (i < s.length()) {
            char c = s.charAt(i);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            i++;
        }
    }

    private boolean eat(char c) {
        space();
        if (i < s.length() && s.charAt(i) == c) {
            i++;
            return true;
        }
        return false;
    }

    /** The members of an object after its '{'; keys, when not null, gets each key. */
    private boolean members(int depth, List<String> keys) {
        if (eat('}')) {
            return true;
        }
        while (true) {
            space();
            String k = string();
            if (k == null || !eat(':') || !value(depth)) {
                return false;
            }
            if (keys != null) {
                keys.add(k);
            }
            if (eat(',')) {
                continue;
            }
            return eat('}');
        }
    }

    private boolean elements(int depth) {
        if (eat(']')) {
            return true;
        }
        while (true) {
            if (!value(depth)) {
                return false;
            }
            if (eat(',')) {
                continue;
            }
            return eat(']');
        }
    }

    private boolean value(int depth) {
        space();
        if (i >= s.length()) {
            return false;
        }
        char c = s.charAt(i);
        switch (c) {
            case '{':
            case '[':
                if (depth >= MAX_DEPTH) {
                    return false;
                }
                i++;
                return c == '{' ? members(depth + 1, null) : elements(depth + 1);
            case '"':
                return string() != null;
            case 't':
                return word("true");
            case 'f':
                return word("false");
            case 'n':
                return word("null");
            default:
                return number();
        }
    }

    private boolean word(String w) {
        if (s.startsWith(w, i)) {
            i += w.length();
            return true;
        }
        return false;
    }

    private boolean digits() {
        int start = i;
        while (i < s.length() && s.charAt(i) >= '0' && s.charAt(i) <= '9') {
            i++;
        }
        return i > start;
    }

    private boolean number() {
        if (i < s.length() && s.charAt(i) == '-') {
            i++;
        }
        if (i < s.length() && s.charAt(i) == '0') {
            i++;
        } else if (!digits()) {
            return false;
        }
        if (i < s.length() && s.charAt(i) == '.') {
            i++;
            if (!digits()) {
                return false;
            }
        }
        if (i < s.length() && (s.charAt(i) == 'e' || s.charAt(i) == 'E')) {
            i++;
            if (i < s.length() && (s.charAt(i) == '+' || s.charAt(i) == '-')) {
                i++;
            }
            return digits();
        }
        return true;
    }

    /** A string at i, unescaped; null when it is not a valid JSON string. */
    private String string() {
        if (i >= s.length() || s.charAt(i) != '"') {
            return null;
        }
        i++;
        StringBuilder b = new StringBuilder();
        while (i < s.length()) {
            char c = s.charAt(i++);
            if (c == '"') {
                return b.toString();
            }
            if (c < 0x20) {
                return null;
            }
            if (c != '\\') {
                b.append(c);
                continue;
            }
            if (i >= s.length()) {
                return null;
            }
            char e = s.charAt(i++);
            switch (e) {
                case '"': b.append('"'); break;
                case '\\': b.append('\\'); break;
                case '/': b.append('/'); break;
                case 'b': b.append('\b'); break;
                case 'f': b.append('\f'); break;
                case 'n': b.append('\n'); break;
                case 'r': b.append('\r'); break;
                case 't': b.append('\t'); break;
                case 'u':
                    if (i + 4 > s.length()) {
                        return null;
                    }
                    int v = 0;
                    for (int k = 0; k < 4; k++) {
                        int d = Character.digit(s.charAt(i + k), 16);
                        if (d < 0) {
                            return null;
                        }
                        v = v * 16 + d;
                    }
                    i += 4;
                    b.append((char) v);
                    break;
                default:
                    return null;
            }
        }
        return null;
    }
}
