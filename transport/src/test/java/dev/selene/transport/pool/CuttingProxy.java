package dev.selene.transport.pool;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A fault-injecting test double: a loopback TCP proxy in front of a data plane that forwards one connection and
 * closes both of its sockets once {@code cutAfter} bytes have gone from client to server (a peer that died
 * mid-record, as the other side sees it).
 */
final class CuttingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final Thread acceptor;
    private final AtomicLong forwarded = new AtomicLong();

    CuttingProxy(DataAddress target, long cutAfter) throws IOException {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("cutting-proxy").start(() -> {
            try (Socket client = listener.accept(); Socket server = new Socket(target.host(), target.port())) {
                Thread back = Thread.ofPlatform().daemon().start(() -> pipe(server, client, Long.MAX_VALUE, null));
                pipe(client, server, cutAfter, forwarded);
                client.close();
                server.close();
                back.join(5_000);
            } catch (IOException | InterruptedException e) {
                // the test closed the proxy
            }
        });
    }

    DataAddress address() {
        return new DataAddress("127.0.0.1", listener.getLocalPort());
    }

    /** Bytes that went from client to server before the cut. */
    long forwarded() {
        return forwarded.get();
    }

    private static void pipe(Socket from, Socket to, long limit, AtomicLong count) {
        byte[] buffer = new byte[16 * 1024];
        long moved = 0;
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            while (moved < limit) {
                int n = in.read(buffer, 0, (int) Math.min(buffer.length, limit - moved));
                if (n < 0) {
                    return;
                }
                out.write(buffer, 0, n);
                moved += n;
                if (count != null) {
                    count.addAndGet(n);
                }
            }
        } catch (IOException e) {
            // a socket closed: the pipe ends
        }
    }

    @Override
    public void close() throws Exception {
        listener.close();
        acceptor.join(5_000);
    }
}
