package dev.selene.bench.pool;

import dev.selene.transport.pool.DataAddress;
import dev.selene.transport.pool.NettyDataPlane;
import dev.selene.transport.pool.RecordService;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The transports a pool could move record bytes on, measured side by side in one JVM over loopback: the same bytes
 * from off-heap memory into off-heap memory in 256 KiB chunks, to one receiver and to two at once (two replicas),
 * rounds alternating the transports, medians reported. CPU is the process's (sender and receivers together) per GB
 * moved, after a warm-up round.
 *
 * <ul>
 *   <li>{@code netty-epoll}, {@code netty-nio}: the pool's data plane's raw push ({@link NettyDataPlane}, one event-loop thread
 *       a connection on each side), which
 *       writes wrapped off-heap buffers and copies what it reads into an off-heap ring;</li>
 *   <li>{@code nio}: plain blocking {@link SocketChannel}s, one thread a connection, writing straight from the
 *       source memory and reading straight into the target memory;</li>
 *   <li>{@code pekko-streams-tcp}: Pekko Streams TCP (the transport under Pekko's own remoting and HTTP), the
 *       sender's chunks wrapped as {@code ByteString}s, the receiver copying each {@code ByteString} into off-heap
 *       memory;</li>
 *   <li>{@code memcpy}: one thread copying the same bytes from memory to memory (the floor: no socket at all).</li>
 * </ul>
 *
 * <p>Usage: {@code RawTransportBench [--mib 1024] [--rounds 5] [--chunk-kib 256]}. Run with
 * {@code --enable-native-access=ALL-UNNAMED}.
 */
public final class RawTransportBench {

    private static final long RING = 64L << 20;

    private final long bytes;
    private final int rounds;
    private final int chunk;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment source = arena.allocate(RING, 4096);

    private RawTransportBench(long bytes, int rounds, int chunk) {
        this.bytes = bytes;
        this.rounds = rounds;
        this.chunk = chunk;
        for (long i = 0; i < RING; i += 8) {
            source.set(ValueLayout.JAVA_LONG_UNALIGNED, i, i * 0x9E3779B97F4A7C15L);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> o = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            o.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        new RawTransportBench(Long.parseLong(o.getOrDefault("mib", "1024")) << 20,
                Integer.parseInt(o.getOrDefault("rounds", "5")),
                Integer.parseInt(o.getOrDefault("chunk-kib", "256")) << 10).run();
    }

    /** One transport's transfer of {@code bytes} to {@code receivers} receivers, each getting all of them. */
    private interface Transport extends AutoCloseable {
        void send(long bytes) throws Exception;

        @Override
        void close();
    }

    private void run() throws Exception {
        Map<String, List<double[]>> results = new LinkedHashMap<>();
        List<String> names = List.of("netty-epoll", "netty-nio", "nio", "pekko-streams-tcp", "memcpy");
        try {
            for (int receivers = 1; receivers <= 2; receivers++) {
                Map<String, Transport> transports = new LinkedHashMap<>();
                for (String n : names) {
                    if (n.equals("memcpy") && receivers > 1) {
                        continue;
                    }
                    transports.put(n, open(n, receivers));
                }
                try {
                    for (int round = 0; round <= rounds; round++) {
                        List<String> order = new ArrayList<>(transports.keySet());
                        java.util.Collections.rotate(order, round);
                        for (String n : order) {
                            double[] f = measure(transports.get(n), bytes);
                            if (round > 0) {
                                results.computeIfAbsent(n + " ×" + receivers, k -> new ArrayList<>()).add(f);
                            }
                        }
                    }
                } finally {
                    transports.values().forEach(Transport::close);
                }
            }
        } finally {
            arena.close();
        }
        System.out.printf(Locale.ROOT, "%.2f GB a round to each receiver, %d KiB chunks, medians of %d rounds%n",
                bytes / 1e9, chunk >> 10, rounds);
        System.out.println("transport × receivers   CPU-s per GB moved   GB/s (each receiver)");
        for (var e : results.entrySet()) {
            System.out.printf(Locale.ROOT, "%-22s  %8.3f             %6.2f%n", e.getKey(), median(e.getValue(), 1),
                    median(e.getValue(), 0));
        }
    }

    private static double median(List<double[]> f, int column) {
        double[] v = f.stream().mapToDouble(x -> x[column]).sorted().toArray();
        return v[v.length / 2];
    }

    /** GB/s to each receiver and process CPU-seconds per GB moved (to all receivers together). */
    private double[] measure(Transport t, long bytes) throws Exception {
        var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
        long cpu0 = os.getProcessCpuTime();
        long t0 = System.nanoTime();
        t.send(bytes);
        long wall = System.nanoTime() - t0;
        long cpu = os.getProcessCpuTime() - cpu0;
        int receivers = t instanceof Receivers r ? r.receivers() : 1;
        return new double[] {bytes / (double) wall, cpu / 1e9 / (bytes * receivers / 1e9)};
    }

    /** A transport with several receivers. */
    private interface Receivers {
        int receivers();
    }

    private Transport open(String name, int receivers) throws Exception {
        return switch (name) {
            case "netty-epoll" -> netty(NettyDataPlane.Backend.EPOLL, receivers);
            case "netty-nio" -> netty(NettyDataPlane.Backend.NIO, receivers);
            case "nio" -> nio(receivers);
            case "pekko-streams-tcp" -> pekkoTcp(receivers);
            case "memcpy" -> memcpy();
            default -> throw new IllegalArgumentException(name);
        };
    }

    private static final RecordService NO_RECORDS = new RecordService() {
        @Override
        public void offered(dev.selene.engine.key.RecordSpec spec, long imageBytes, Admission admission) {
            admission.refuse("raw only");
        }

        @Override
        public void requested(dev.selene.engine.key.RecordKey key, Delivery delivery) {
            delivery.notHeld("raw only");
        }
    };

    private Transport netty(NettyDataPlane.Backend backend, int receivers) {
        List<NettyDataPlane> servers = new ArrayList<>();
        for (int i = 0; i < receivers; i++) {
            servers.add(NettyDataPlane.serve("127.0.0.1", 0, null, backend, NettyDataPlane.DEFAULT_SILENCE, 1,
                    NO_RECORDS));
        }
        NettyDataPlane client = NettyDataPlane.client(backend, NettyDataPlane.DEFAULT_SILENCE, receivers);
        List<DataAddress> to = servers.stream().map(NettyDataPlane::address).toList();
        class Netty implements Transport, Receivers {
            @Override
            public void send(long bytes) {
                CompletableFuture.allOf(to.stream().map(a -> client.rawPush(a, bytes, chunk).done())
                        .toArray(CompletableFuture[]::new)).join();
            }

            @Override
            public int receivers() {
                return receivers;
            }

            @Override
            public void close() {
                client.close();
                servers.forEach(NettyDataPlane::close);
            }
        }
        return new Netty();
    }

    /** Plain blocking NIO: a sender thread and a receiver thread per connection, straight from and into memory. */
    private Transport nio(int receivers) throws Exception {
        ExecutorService threads = Executors.newCachedThreadPool();
        List<ServerSocketChannel> servers = new ArrayList<>();
        List<SocketChannel> senders = new ArrayList<>();
        List<SocketChannel> accepted = new ArrayList<>();
        List<MemorySegment> targets = new ArrayList<>();
        for (int i = 0; i < receivers; i++) {
            ServerSocketChannel server = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
            servers.add(server);
            SocketChannel out = SocketChannel.open(server.getLocalAddress());
            out.setOption(java.net.StandardSocketOptions.TCP_NODELAY, true);
            senders.add(out);
            accepted.add(server.accept());
            targets.add(arena.allocate(RING, 4096));
        }
        class Nio implements Transport, Receivers {
            @Override
            public void send(long bytes) throws Exception {
                List<Future<?>> running = new ArrayList<>();
                for (int i = 0; i < receivers; i++) {
                    SocketChannel out = senders.get(i);
                    SocketChannel in = accepted.get(i);
                    MemorySegment target = targets.get(i);
                    running.add(threads.submit(() -> {
                        pump(out, source, bytes, true);
                        return null;
                    }));
                    running.add(threads.submit(() -> {
                        pump(in, target, bytes, false);
                        return null;
                    }));
                }
                for (Future<?> f : running) {
                    f.get();
                }
            }

            @Override
            public int receivers() {
                return receivers;
            }

            @Override
            public void close() {
                threads.shutdownNow();
                for (var c : senders) {
                    closeQuietly(c);
                }
                for (var c : accepted) {
                    closeQuietly(c);
                }
                for (var c : servers) {
                    closeQuietly(c);
                }
            }
        }
        return new Nio();
    }

    /** Writes or reads {@code bytes} through {@code memory} (a ring) in chunks. */
    private void pump(SocketChannel channel, MemorySegment memory, long bytes, boolean write) throws Exception {
        long done = 0;
        while (done < bytes) {
            long at = done % RING;
            int n = (int) Math.min(chunk, Math.min(bytes - done, RING - at));
            ByteBuffer b = memory.asSlice(at, n).asByteBuffer();
            while (b.hasRemaining()) {
                if ((write ? channel.write(b) : channel.read(b)) < 0) {
                    throw new IllegalStateException("closed");
                }
            }
            done += n;
        }
    }

    /** Pekko Streams TCP: one connection per receiver and round, bytes landed into off-heap memory as they come. */
    private Transport pekkoTcp(int receivers) throws Exception {
        var system = org.apache.pekko.actor.typed.ActorSystem.create(
                org.apache.pekko.actor.typed.javadsl.Behaviors.empty(), "raw-transport-bench",
                com.typesafe.config.ConfigFactory.parseString("pekko.loglevel = WARNING\n"
                        + "pekko.actor.provider = local\npekko.coordinated-shutdown.run-by-jvm-shutdown-hook = off")
                        .withFallback(com.typesafe.config.ConfigFactory.defaultReference()));
        var tcp = org.apache.pekko.stream.javadsl.Tcp.get(system);
        List<java.util.concurrent.atomic.AtomicReference<Landing>> landings = new ArrayList<>();
        List<InetSocketAddress> addresses = new ArrayList<>();
        List<org.apache.pekko.stream.javadsl.Tcp.ServerBinding> bindings = new ArrayList<>();
        for (int i = 0; i < receivers; i++) {
            var landing = new java.util.concurrent.atomic.AtomicReference<Landing>();
            landings.add(landing);
            MemorySegment target = arena.allocate(RING, 4096);
            var binding = tcp.bind("127.0.0.1", 0).to(org.apache.pekko.stream.javadsl.Sink.foreach(c ->
                    c.handleWith(org.apache.pekko.stream.javadsl.Flow.fromSinkAndSource(
                            org.apache.pekko.stream.javadsl.Sink.<org.apache.pekko.util.ByteString>foreach(b ->
                                    landing.get().land(b, target)),
                            org.apache.pekko.stream.javadsl.Source.<org.apache.pekko.util.ByteString>maybe()),
                            system))).run(system).toCompletableFuture().get();
            bindings.add(binding);
            addresses.add(binding.localAddress());
        }
        class PekkoTcp implements Transport, Receivers {
            @Override
            public void send(long bytes) {
                List<CompletableFuture<Void>> landed = new ArrayList<>();
                for (int i = 0; i < receivers; i++) {
                    Landing l = new Landing(bytes);
                    landings.get(i).set(l);
                    landed.add(l.done);
                    long chunks = (bytes + chunk - 1) / chunk;
                    org.apache.pekko.stream.javadsl.Source.range(0, (int) chunks - 1).map(k -> {
                        long done = (long) k * chunk;
                        long at = done % RING;
                        int n = (int) Math.min(chunk, Math.min(bytes - done, RING - at));
                        return org.apache.pekko.util.ByteString.fromByteBuffer(source.asSlice(at, n).asByteBuffer());
                    }).via(tcp.outgoingConnection(addresses.get(i).getHostString(), addresses.get(i).getPort()))
                            .runWith(org.apache.pekko.stream.javadsl.Sink.ignore(), system);
                }
                CompletableFuture.allOf(landed.toArray(CompletableFuture[]::new)).join();
            }

            @Override
            public int receivers() {
                return receivers;
            }

            @Override
            public void close() {
                bindings.forEach(b -> b.unbind());
                system.terminate();
            }
        }
        return new PekkoTcp();
    }

    /** Where a round's bytes land on one receiver, and when all of them have. */
    private static final class Landing {
        final CompletableFuture<Void> done = new CompletableFuture<>();
        private final long expected;
        private long received;

        Landing(long expected) {
            this.expected = expected;
        }

        void land(org.apache.pekko.util.ByteString b, MemorySegment target) {
            for (ByteBuffer part : b.getByteBuffers()) {
                int n = part.remaining();
                long at = received % RING;
                long first = Math.min(n, RING - at);
                MemorySegment.copy(MemorySegment.ofBuffer(part), 0, target, at, first);
                if (first < n) {
                    MemorySegment.copy(MemorySegment.ofBuffer(part), first, target, 0, n - first);
                }
                received += n;
            }
            if (received >= expected) {
                done.complete(null);
            }
        }
    }

    private Transport memcpy() {
        MemorySegment target = arena.allocate(RING, 4096);
        return new Transport() {
            @Override
            public void send(long bytes) {
                for (long done = 0; done < bytes; ) {
                    long at = done % RING;
                    long n = Math.min(chunk, Math.min(bytes - done, RING - at));
                    MemorySegment.copy(source, at, target, at, n);
                    done += n;
                }
            }

            @Override
            public void close() {
            }
        };
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // closing
        }
    }
}
