package dev.selene.transport.pool;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;

/**
 * A fault-injecting test double: a loopback TCP proxy in front of a data plane, for one connection, that passes what
 * the client sends at once and what the server sends back in pieces of {@code piece} bytes, one every {@code pause}
 * (a slow, congested path: the client keeps hearing from its peer, only slowly).
 */
final class TricklingProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final Thread acceptor;

    TricklingProxy(DataAddress target, int piece, Duration pause) throws IOException {
        listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("trickling-proxy").start(() -> {
            try (Socket client = listener.accept(); Socket server = new Socket(target.host(), target.port())) {
                Thread back = Thread.ofPlatform().daemon().start(() -> pipe(server, client, piece, pause));
                pipe(client, server, 64 * 1024, Duration.ZERO);
                back.join(5_000);
            } catch (IOException | InterruptedException e) {
                // the test closed the proxy
            }
        });
    }

    DataAddress address() {
        return new DataAddress("127.0.0.1", listener.getLocalPort());
    }

    private static void pipe(Socket from, Socket to, int piece, Duration pause) {
        byte[] buffer = new byte[piece];
        try {
            InputStream in = from.getInputStream();
            OutputStream out = to.getOutputStream();
            for (int n; (n = in.read(buffer)) >= 0; ) {
                out.write(buffer, 0, n);
                out.flush();
                if (!pause.isZero()) {
                    Thread.sleep(pause);
                }
            }
        } catch (IOException | InterruptedException e) {
            // a socket closed: the pipe ends
        } finally {
            try {
                to.shutdownOutput();
            } catch (IOException e) {
                // already closed
            }
        }
    }

    @Override
    public void close() throws Exception {
        listener.close();
        acceptor.join(5_000);
    }
}
