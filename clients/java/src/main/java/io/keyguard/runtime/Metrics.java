package io.keyguard.runtime;

import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;

/**
 * The counters of the Go hook, with its names and labels, so that the alert rules of
 * {@code deploy/alerts.yml} (a second writer of a template, guard conflicts) see Java services:
 *
 * <pre>
 * keyguard_commands_total{template,owner,service,access}   access: read | write
 * keyguard_unregistered_total{service,access}              keys of no template
 * keyguard_guard_conflicts_total{template,owner}           owner: the namespace the guard found
 * </pre>
 *
 * No metrics library is needed: the counters are kept here and written in Prometheus' text
 * format, by {@link #writeText} (from a Spring controller, say) or {@link #handler} (a
 * {@code /metrics} of the JDK's own HTTP server); {@link #forEach} hands each series to
 * another library (Micrometer's {@code FunctionCounter}, the Prometheus Java client's
 * collector) for a service that exports through one. Labels never carry a key: keys are
 * reduced to their template. Give one Metrics to every guard and executor of a
 * process, so that they share the series. Thread-safe.
 */
public final class Metrics {
    public static final String COMMANDS = "keyguard_commands_total";
    public static final String UNREGISTERED = "keyguard_unregistered_total";
    public static final String GUARD_CONFLICTS = "keyguard_guard_conflicts_total";
    /** The template label of a conflict on a key of no template. */
    public static final String TEMPLATE_UNREGISTERED = "unregistered";

    private static final class Family {
        final String name, help;
        final List<String> labels;
        final ConcurrentHashMap<List<String>, LongAdder> series = new ConcurrentHashMap<>();

        Family(String name, String help, String... labels) {
            this.name = name;
            this.help = help;
            this.labels = List.of(labels);
        }

        void inc(String... values) {
            List<String> key = new ArrayList<>(values.length);
            for (String v : values) {
                key.add(v == null ? "" : v);
            }
            series.computeIfAbsent(Collections.unmodifiableList(key), k -> new LongAdder()).increment();
        }
    }

    private final Family commands = new Family(COMMANDS,
            "Redis commands per key template, template owner, calling service and access (read|write).",
            "template", "owner", "service", "access");
    private final Family unregistered = new Family(UNREGISTERED,
            "Redis commands touching keys that match no registered template.", "service", "access");
    private final Family conflicts = new Family(GUARD_CONFLICTS,
            "Namespace guard conflicts: writes refused because another namespace owns the key.", "template", "owner");
    private final List<Family> families = List.of(commands, unregistered, conflicts);

    /**
     * Counts one command of service touching keys of template (null: keys of no template, counted
     * in keyguard_unregistered_total), whose registry owner is owner; write: it writes.
     */
    public void command(String template, String owner, String service, boolean write) {
        String access = write ? "write" : "read";
        if (template == null) {
            unregistered.inc(service, access);
        } else {
            commands.inc(template, owner, service, access);
        }
    }

    /** Counts a guarded write of template (null: of no template) refused because ownerFound owns the key. */
    public void guardConflict(String template, String ownerFound) {
        conflicts.inc(template == null ? TEMPLATE_UNREGISTERED : template, ownerFound);
    }

    /** Receives the series of {@link #forEach}. */
    @FunctionalInterface
    public interface Sample {
        void accept(String name, Map<String, String> labels, long value);
    }

    /** Hands every series counted so far to s: its name, labels (in order) and value. */
    public void forEach(Sample s) {
        for (Family f : families) {
            for (Map.Entry<List<String>, LongAdder> e : sorted(f)) {
                Map<String, String> labels = new LinkedHashMap<>();
                for (int i = 0; i < f.labels.size(); i++) {
                    labels.put(f.labels.get(i), e.getKey().get(i));
                }
                s.accept(f.name, Collections.unmodifiableMap(labels), e.getValue().sum());
            }
        }
    }

    private static List<Map.Entry<List<String>, LongAdder>> sorted(Family f) {
        List<Map.Entry<List<String>, LongAdder>> out = new ArrayList<>(f.series.entrySet());
        out.sort((a, b) -> {
            for (int i = 0; i < a.getKey().size(); i++) {
                int c = a.getKey().get(i).compareTo(b.getKey().get(i));
                if (c != 0) {
                    return c;
                }
            }
            return 0;
        });
        return out;
    }

    /** The content type of {@link #writeText}'s output. */
    public static final String CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

    /** Writes every counter in Prometheus' text exposition format (version 0.0.4). */
    public void writeText(Appendable out) throws IOException {
        for (Family f : families) {
            out.append("# HELP ").append(f.name).append(' ').append(escape(f.help, false)).append('\n');
            out.append("# TYPE ").append(f.name).append(" counter\n");
            for (Map.Entry<List<String>, LongAdder> e : sorted(f)) {
                out.append(f.name).append('{');
                for (int i = 0; i < f.labels.size(); i++) {
                    if (i > 0) {
                        out.append(',');
                    }
                    out.append(f.labels.get(i)).append("=\"").append(escape(e.getKey().get(i), true)).append('"');
                }
                out.append("} ").append(Long.toString(e.getValue().sum())).append('\n');
            }
        }
    }

    /** {@link #writeText} as a string. */
    public String text() {
        StringBuilder b = new StringBuilder();
        try {
            writeText(b);
        } catch (IOException e) {
            throw new IllegalStateException(e); // a StringBuilder does not throw
        }
        return b.toString();
    }

    /**
     * A handler of the JDK's HTTP server that answers with {@link #writeText}:
     * {@code HttpServer.create(new InetSocketAddress(9464), 0).createContext("/metrics", metrics.handler())}.
     */
    public HttpHandler handler() {
        return exchange -> {
            byte[] body = text().getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().set("Content-Type", CONTENT_TYPE);
            boolean head = "HEAD".equals(exchange.getRequestMethod());
            exchange.sendResponseHeaders(200, head ? -1 : body.length);
            if (!head) {
                try (OutputStream os = exchange.getResponseBody()) {
                    os.write(body);
                }
            }
            exchange.close();
        };
    }

    /** A label value (label) or help text as the text format writes it. */
    static String escape(String s, boolean label) {
        StringBuilder b = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '\\') {
                b.append("\\\\");
            } else if (c == '\n') {
                b.append("\\n");
            } else if (c == '"' && label) {
                b.append("\\\"");
            } else {
                b.append(c);
            }
        }
        return b.toString();
    }
}
