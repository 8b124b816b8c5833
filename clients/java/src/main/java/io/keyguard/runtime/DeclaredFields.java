package io.keyguard.runtime;

import java.util.ArrayList;
import java.util.List;

/**
 * A template's declared value format (registry fields, and whether values may hold others:
 * fields_extra: allow), as the TTL policy and the guard check a write against it before sending
 * anything: the field names of a hash write, or the top-level keys of the JSON object a string
 * write holds. A refused write throws {@link PolicyException}, reason schema.
 */
final class DeclaredFields {
    /** The most undeclared fields an error names. */
    private static final int MAX_LISTED = 16;

    private final String template;
    private final List<String> fields;
    private final boolean extra;

    DeclaredFields(String template, List<String> fields, boolean extra) {
        this.template = template;
        this.fields = fields == null ? List.of() : List.copyOf(fields);
        this.extra = extra;
    }

    /** Whether the template declares any field (nothing is checked otherwise). */
    boolean declared() {
        return !fields.isEmpty();
    }

    private List<String> undeclared(Iterable<String> names) {
        List<String> out = new ArrayList<>();
        if (extra) {
            return out;
        }
        for (String n : names) {
            if (!fields.contains(n) && !out.contains(n)) {
                out.add(n);
                if (out.size() == MAX_LISTED) {
                    break;
                }
            }
        }
        return out;
    }

    private PolicyException refused(String op, String key, List<String> undeclared) {
        String msg = undeclared.isEmpty()
                ? "the template's values are JSON objects of the fields " + fields
                        + " and this value is not one; write a JSON object of those fields"
                : "the template declares the fields " + fields + ", not " + undeclared
                        + "; write only declared fields (the generated constants name them), or add them to the template's fields in the registry";
        return new PolicyException(op, key, template, "schema", msg, undeclared);
    }

    /** Refuses a hash write of a field the template does not declare. */
    void checkHash(String op, String key, Iterable<String> names) {
        if (!declared()) {
            return;
        }
        List<String> u = undeclared(names);
        if (!u.isEmpty()) {
            throw refused(op, key, u);
        }
    }

    /** Refuses a string write that is not a JSON object of the declared fields. */
    void checkJson(String op, String key, String value) {
        if (!declared()) {
            return;
        }
        List<String> keys = JsonKeys.of(value);
        if (keys == null) {
            throw refused(op, key, List.of());
        }
        List<String> u = undeclared(keys);
        if (!u.isEmpty()) {
            throw refused(op, key, u);
        }
    }
}
