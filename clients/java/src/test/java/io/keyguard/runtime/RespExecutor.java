package io.keyguard.runtime;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A test-only executor: RESP2 over a socket to a real redis-server, following
 * MOVED redirections on a Cluster. It stands in for Jedis or Lettuce where
 * those libraries cannot be installed; it is not part of the package.
 */
final class RespExecutor implements ScriptExecutor, AutoCloseable {
    /** An error reply, thrown as the clients throw theirs. */
    static final class ReplyException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        ReplyException(String msg) {
            super(msg);
        }
    }

    private static final class Conn {
        final Socket s;
        final InputStream in;
        final OutputStream out;

        Conn(String addr) throws IOException {
            int i = addr.lastIndexOf(':');
            s = new Socket(addr.substring(0, i), Integer.parseInt(addr.substring(i + 1)));
            s.setTcpNoDelay(true);
            in = new BufferedInputStream(s.getInputStream());
            out = s.getOutputStream();
        }
    }

    private final String seed;
    private final Map<String, Conn> conns = new HashMap<>();
    private final Map<Integer, String> slots = new HashMap<>();

    RespExecutor(String addr) {
        this.seed = addr;
    }

    @Override
    public synchronized Object execute(String key, List<String> command) {
        String addr = key == null ? seed : slots.getOrDefault(slot(key), seed);
        for (int hop = 0; hop < 5; hop++) {
            Object r = roundTrip(addr, command);
            if (r instanceof ReplyException) {
                String msg = ((ReplyException) r).getMessage();
                if (msg.startsWith("MOVED ") || msg.startsWith("ASK ")) {
                    String[] p = msg.split(" ");
                    addr = p[2];
                    if (msg.startsWith("MOVED ")) {
                        slots.put(Integer.parseInt(p[1]), addr);
                    }
                    continue;
                }
                throw (ReplyException) r;
            }
            return r;
        }
        throw new ReplyException("too many redirections for " + key);
    }

    private Object roundTrip(String addr, List<String> command) {
        try {
            Conn c = conns.get(addr);
            if (c == null) {
                c = new Conn(addr);
                conns.put(addr, c);
            }
            ByteArrayOutputStream b = new ByteArrayOutputStream();
            b.write(("*" + command.size() + "\r\n").getBytes(StandardCharsets.US_ASCII));
            for (String a : command) {
                byte[] v = a.getBytes(StandardCharsets.UTF_8);
                b.write(("$" + v.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
                b.write(v);
                b.write('\r');
                b.write('\n');
            }
            c.out.write(b.toByteArray());
            c.out.flush();
            return read(c.in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String line(InputStream in) throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) != '\r') {
            if (c < 0) {
                throw new IOException("connection closed");
            }
            b.write(c);
        }
        in.read(); // \n
        return b.toString(StandardCharsets.UTF_8);
    }

    private static Object read(InputStream in) throws IOException {
        int t = in.read();
        String l = line(in);
        switch (t) {
            case '+':
                return l;
            case '-':
                return new ReplyException(l);
            case ':':
                return Long.parseLong(l);
            case '$': {
                int n = Integer.parseInt(l);
                if (n < 0) {
                    return null;
                }
                byte[] v = in.readNBytes(n + 2);
                return new String(v, 0, n, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(l);
                if (n < 0) {
                    return null;
                }
                List<Object> out = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    Object v = read(in);
                    out.add(v);
                }
                return out;
            }
            default:
                throw new IOException("bad reply type " + (char) t);
        }
    }

    static int slot(String key) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        int s = -1, e = -1;
        for (int i = 0; i < k.length; i++) {
            if (k[i] == '{' && s < 0) {
                s = i;
            } else if (k[i] == '}' && s >= 0) {
                e = i;
                break;
            }
        }
        int from = 0, to = k.length;
        if (s >= 0 && e > s + 1) {
            from = s + 1;
            to = e;
        }
        int crc = 0;
        for (int i = from; i < to; i++) {
            crc ^= (k[i] & 0xff) << 8;
            for (int j = 0; j < 8; j++) {
                crc = (crc & 0x8000) != 0 ? (crc << 1) ^ 0x1021 : crc << 1;
                crc &= 0xffff;
            }
        }
        return crc % 16384;
    }

    @Override
    public synchronized void close() throws IOException {
        for (Conn c : conns.values()) {
            c.s.close();
        }
        conns.clear();
    }
}
