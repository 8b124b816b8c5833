package io.keyguard.runtime;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Test driver of the interop checks (clients/interop_test.go): one JSON
 * request per line on stdin, one JSON reply per line on stdout, run with the
 * Guard over {@link RespExecutor}. Not part of the package.
 */
public final class InteropDriver {
    /** The HTTP servers serve_metrics started, stopped at the end of input. */
    private static final List<com.sun.net.httpserver.HttpServer> SERVERS = new ArrayList<>();

    public static void main(String[] argv) throws Exception {
        String addr = null;
        for (int i = 0; i < argv.length; i++) {
            if (argv[i].equals("--addrs")) {
                addr = argv[i + 1].split(",")[0];
            }
        }
        RespExecutor x = new RespExecutor(addr);
        WriterRecorder recorder = new WriterRecorder(new RespExecutor(addr));
        Map<String, Guard> guards = new HashMap<>();
        Metrics metrics = new Metrics();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        java.io.PrintStream stdout = new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        String line;
        while ((line = in.readLine()) != null) {
            Map<String, Object> req = Json.object(line);
            Map<String, Object> reply = new LinkedHashMap<>();
            reply.put("id", req.get("id"));
            try {
                reply.put("ok", run(x, recorder, metrics, guards, req));
            } catch (RuntimeException e) {
                reply.put("err", error(e));
            }
            stdout.print(Json.write(reply) + "\n");
            stdout.flush();
        }
        x.close();
        for (com.sun.net.httpserver.HttpServer srv : SERVERS) {
            srv.stop(0); // its dispatcher thread would keep the JVM alive
        }
    }

    /** The key of a template's values in order, as the generated builders build it. */
    private static String fill(String template, List<Object> values) {
        StringBuilder b = new StringBuilder();
        int v = 0;
        for (int i = 0; i < template.length(); i++) {
            char c = template.charAt(i);
            if (c != '{') {
                b.append(c);
                continue;
            }
            i = template.indexOf('}', i);
            b.append(values.get(v++));
        }
        return b.toString();
    }

    private static Duration ttl(Map<String, Object> req) {
        Object v = req.get("ttl_ms");
        return v == null ? null : Duration.ofMillis(((Number) v).longValue());
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> fields(Object o) {
        Map<String, String> out = new LinkedHashMap<>();
        ((Map<String, Object>) o).forEach((k, v) -> out.put(k, String.valueOf(v)));
        return out;
    }

    @SuppressWarnings("unchecked")
    private static Object run(RespExecutor x, WriterRecorder recorder, Metrics metrics, Map<String, Guard> guards,
            Map<String, Object> req) {
        String op = (String) req.get("op");
        String key = (String) req.get("key");
        // template_owner: the registry owner of template (text), as Keys.Template carries it; the
        // guard and the recording executor then count in metrics.
        String templateOwner = (String) req.get("template_owner");
        if (key == null && req.get("template") != null && req.get("values") != null) {
            key = fill((String) req.get("template"), (List<Object>) req.get("values"));
        }
        Guard g = null;
        if (req.get("owner") != null) {
            String owner = (String) req.get("owner");
            Object gt = req.get("guard_ttl_ms");
            String service = (String) req.get("service");
            String template = (String) req.get("template_text");
            // declared: the template's fields, as a guard of one template is built with them
            Map<String, Object> declared = (Map<String, Object>) req.get("declared");
            String id = owner + "|" + gt + "|" + service + "|" + template + "|" + declared + "|" + templateOwner;
            g = guards.computeIfAbsent(id, k -> {
                Guard.Builder b = Guard.builder(x, owner).ttl(Duration.ofMillis(gt == null ? 3_600_000L : ((Number) gt).longValue()));
                if (template != null) {
                    b.records(recorder, template, service);
                }
                if (templateOwner != null) {
                    b.metrics(metrics, (String) req.get("template"), templateOwner, service);
                }
                if (declared != null) {
                    b.fields((String) declared.get("template"), (List<String>) declared.get("fields"),
                            Boolean.TRUE.equals(declared.get("fields_extra")));
                }
                return b.build();
            });
        }
        Map<String, Object> out = new LinkedHashMap<>();
        switch (op) {
            case "hset":
                return result(g.hset(key, fields(req.get("fields")), ttl(req)));
            case "get":
                out.put("value", g.get(key, (String) req.get("field")));
                return out;
            case "getall":
                out.put("fields", g.getAll(key));
                return out;
            case "owner":
                out.put("owner", g.ownerOf(key));
                return out;
            case "delete":
                out.put("deleted", g.delete(key));
                return out;
            case "force_delete":
                out.put("deleted", g.forceDelete(key));
                return out;
            case "expire_nx":
                out.put("set", g.expireNx(key, ttl(req)));
                return out;
            case "batch": {
                List<Guard.SetOp> ops = new ArrayList<>();
                for (Object o : (List<Object>) req.get("ops")) {
                    Map<String, Object> m = (Map<String, Object>) o;
                    ops.add(new Guard.SetOp((String) m.get("key"), fields(m.get("fields")), ttl(req)));
                }
                List<Object> rs = new ArrayList<>();
                for (Object r : g.hsetMany(ops)) {
                    Map<String, Object> e = new LinkedHashMap<>();
                    if (r instanceof Result) {
                        e.put("ok", result((Result) r));
                    } else {
                        e.put("err", error((RuntimeException) r));
                    }
                    rs.add(e);
                }
                out.put("results", rs);
                return out;
            }
            case "write": { // a plain HSET through the recording interceptor
                String template = (String) req.get("template");
                RecordingExecutor r = templateOwner == null
                        ? new RecordingExecutor(x, recorder, (String) req.get("service"), Templates.matcher(List.of(template), ':'))
                        : new RecordingExecutor(x, recorder, (String) req.get("service"), Templates.matcher(List.of(template), ':'),
                                metrics, Map.of(template, templateOwner));
                List<String> cmd = new ArrayList<>(List.of("HSET", key));
                fields(req.get("fields")).forEach((f, v) -> {
                    cmd.add(f);
                    cmd.add(v);
                });
                r.execute(key, cmd);
                return out;
            }
            case "policy": { // TtlPolicy built from the template's registry entry, as from Keys.Template
                Map<String, Object> t = (Map<String, Object>) req.get("entry");
                TtlPolicy p = new TtlPolicy(x, (String) t.get("template"), (String) t.get("type"),
                        Duration.ofMillis(((Number) t.get("ttl_ms")).longValue()),
                        Duration.ofMillis(((Number) t.get("jitter_ms")).longValue()), (Boolean) t.get("persistent"),
                        t.get("fields") == null ? List.of() : (List<String>) t.get("fields"), Boolean.TRUE.equals(t.get("fields_extra")));
                switch ((String) req.get("how")) {
                    case "hset":
                        out.put("added", p.hset(key, fields(req.get("fields"))));
                        break;
                    case "set":
                        p.set(key, (String) req.get("value"));
                        break;
                    default:
                        p.persist(key);
                }
                return out;
            }
            case "jsonkeys": // the top-level keys TtlPolicy reads of a JSON object (null: not one)
                out.put("keys", JsonKeys.of((String) req.get("value")));
                return out;
            case "match":
                out.put("template", Templates.matcher(((List<Object>) req.get("templates")).stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.toList()), ':').apply(key));
                return out;
            case "flush":
                out.put("records", recorder.flush());
                return out;
            case "metrics": // the counters in Prometheus' text format
                out.put("text", metrics.text());
                return out;
            case "serve_metrics": { // Metrics.handler on the JDK's HTTP server, on a free port
                try {
                    com.sun.net.httpserver.HttpServer srv = com.sun.net.httpserver.HttpServer.create(
                            new java.net.InetSocketAddress("127.0.0.1", 0), 0);
                    srv.createContext("/metrics", metrics.handler());
                    srv.start();
                    SERVERS.add(srv);
                    out.put("port", srv.getAddress().getPort());
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return out;
            }
            case "bench":
                return bench(x, ((Number) req.get("n")).intValue(), (String) req.get("prefix"));
            case "version":
                out.put("version", Script.VERSION);
                out.put("sha", Guard.SCRIPT_SHA);
                return out;
            default:
                throw new IllegalArgumentException("unknown op " + op);
        }
    }

    private static Map<String, Object> bench(RespExecutor x, int n, String prefix) {
        Guard g = Guard.builder(x, "bench:java").ttl(Duration.ofHours(1)).build();
        long plain = 0, guarded = 0;
        for (int rnd = 0; rnd < 4; rnd++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                String k = prefix + ":plain:" + (i % 100);
                x.execute(k, List.of("HSET", k, "f", "v"));
            }
            long t1 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                g.hset(prefix + ":guarded:" + (i % 100), Map.of("f", "v"));
            }
            long t2 = System.nanoTime();
            if (rnd > 0) {
                plain += t1 - t0;
                guarded += t2 - t1;
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("plain_ns", plain / (3.0 * n));
        out.put("guarded_ns", guarded / (3.0 * n));
        return out;
    }

    private static Map<String, Object> result(Result r) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("added", r.added);
        m.put("updated", r.updated);
        m.put("claimed", r.claimed);
        m.put("adopted", r.adopted);
        m.put("ttl_set", r.ttlSet);
        return m;
    }

    private static Map<String, Object> error(RuntimeException e) {
        Map<String, Object> m = new LinkedHashMap<>();
        if (e instanceof ForeignOwnerException) {
            ForeignOwnerException f = (ForeignOwnerException) e;
            m.put("kind", "conflict");
            m.put("key", f.key());
            m.put("owner", f.owner());
            m.put("caller", f.caller());
        } else if (e instanceof WrongTypeException) {
            WrongTypeException w = (WrongTypeException) e;
            m.put("kind", "wrongtype");
            m.put("key", w.key());
            m.put("found_type", w.foundType());
            m.put("caller", w.caller());
        } else if (e instanceof ReservedFieldException) {
            m.put("kind", "reserved");
        } else if (e instanceof PolicyException) {
            m.put("kind", "policy");
            m.put("reason", ((PolicyException) e).reason());
            m.put("undeclared", ((PolicyException) e).undeclared());
        } else {
            m.put("kind", "other");
        }
        m.put("message", e.getClass().getSimpleName() + ": " + e.getMessage());
        return m;
    }

    /** Just enough JSON for the driver's requests and replies. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        @SuppressWarnings("unchecked")
        static Map<String, Object> object(String s) {
            return (Map<String, Object>) new Json(s).value();
        }

        private void ws() {
            while (i < s.length() && Character.isWhitespace(s.charAt(i))) {
                i++;
            }
        }

        private Object value() {
            ws();
            char c = s.charAt(i);
            if (c == '{') {
                i++;
                Map<String, Object> m = new LinkedHashMap<>();
                ws();
                if (s.charAt(i) == '}') {
                    i++;
                    return m;
                }
                while (true) {
                    ws();
                    String k = string();
                    ws();
                    i++; // :
                    m.put(k, value());
                    ws();
                    if (s.charAt(i++) == '}') {
                        return m;
                    }
                }
            }
            if (c == '[') {
                i++;
                List<Object> l = new ArrayList<>();
                ws();
                if (s.charAt(i) == ']') {
                    i++;
                    return l;
                }
                while (true) {
                    l.add(value());
                    ws();
                    if (s.charAt(i++) == ']') {
                        return l;
                    }
                }
            }
            if (c == '"') {
                return string();
            }
            if (s.startsWith("null", i)) {
                i += 4;
                return null;
            }
            if (s.startsWith("true", i)) {
                i += 4;
                return true;
            }
            if (s.startsWith("false", i)) {
                i += 5;
                return false;
            }
            int j = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) {
                i++;
            }
            String num = s.substring(j, i);
            if (num.contains(".") || num.contains("e") || num.contains("E")) {
                return Double.parseDouble(num);
            }
            return Long.parseLong(num);
        }

        private String string() {
            StringBuilder b = new StringBuilder();
            i++; // "
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n':
                        b.append('\n');
                        break;
                    case 't':
                        b.append('\t');
                        break;
                    case 'r':
                        b.append('\r');
                        break;
                    case 'b':
                        b.append('\b');
                        break;
                    case 'f':
                        b.append('\f');
                        break;
                    case 'u':
                        b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        i += 4;
                        break;
                    default:
                        b.append(e);
                }
            }
        }

        static String write(Object v) {
            StringBuilder b = new StringBuilder();
            write(b, v);
            return b.toString();
        }

        @SuppressWarnings("unchecked")
        private static void write(StringBuilder b, Object v) {
            if (v == null) {
                b.append("null");
            } else if (v instanceof String) {
                b.append('"');
                for (char c : ((String) v).toCharArray()) {
                    if (c == '"' || c == '\\') {
                        b.append('\\').append(c);
                    } else if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
                b.append('"');
            } else if (v instanceof Map) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<String, Object> e : ((Map<String, Object>) v).entrySet()) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    write(b, e.getKey());
                    b.append(':');
                    write(b, e.getValue());
                }
                b.append('}');
            } else if (v instanceof List) {
                b.append('[');
                boolean first = true;
                for (Object o : (List<Object>) v) {
                    if (!first) {
                        b.append(',');
                    }
                    first = false;
                    write(b, o);
                }
                b.append(']');
            } else {
                b.append(v);
            }
        }
    }
}
