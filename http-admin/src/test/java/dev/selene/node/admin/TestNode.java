package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.selene.actors.value.PublishResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.engine.key.ChainHash;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import dev.selene.node.config.NodeSettings;
import dev.selene.node.config.SettingsLoader;
import dev.selene.node.serve.SeleneNode;
import dev.selene.transport.gpu.DevicePlacement;
import dev.selene.transport.gpu.KeyedContent;
import dev.selene.transport.gpu.SimulatedDevice;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real node for admin tests: the cache on a simulated device and its admin server on a free loopback port,
 * reached through a real {@link HttpClient}.
 */
final class TestNode implements AutoCloseable {

    static final String TOKEN = "test-token-0123456789";

    final SimulatedDevice device = SimulatedDevice.create();
    final SeleneNode node;
    final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    final String base;
    private final List<Long> deviceAllocations = new ArrayList<>();

    TestNode(Map<String, ?> overrides) {
        this(null, overrides);
    }

    /** A node of {@code config} (null: the defaults) with the test's settings and {@code overrides} on top. */
    TestNode(Path config, Map<String, ?> overrides) {
        Map<String, Object> s = new HashMap<>(Map.of(
                "selene.layout", "small",
                "selene.warm", "1m",
                "selene.concurrency", "1",
                "selene.host-budget", "64m",
                "selene.device", "simulated",
                "selene.admin.port", "0",
                "selene.admin.token", TOKEN,
                "selene.admin.sample-interval", "100ms"));
        s.putAll(overrides);
        NodeSettings settings = SettingsLoader.load(config, s);
        this.node = SeleneNode.start(settings, device);
        this.base = "http://127.0.0.1:" + node.adminPort();
    }

    Layout layout() {
        return node.cache().layout();
    }

    /** Publishes a chain of records for {@code blocks} (a row at the last one) and returns their keys. */
    List<RecordKey> publishChain(String ns, long... blocks) {
        long[] chain = ChainHash.chain(blocks);
        List<RecordKey> keys = new ArrayList<>();
        for (int i = 0; i < chain.length; i++) {
            boolean hasRow = i == chain.length - 1;
            RecordKey key = new RecordKey(ns, chain[i]);
            RecordSpec spec = new RecordSpec(key, i == 0 ? null : keys.get(i - 1), hasRow);
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(layout(), hasRow));
            deviceAllocations.add(base);
            DevicePlacement p = DevicePlacement.contiguous(layout(), base, hasRow);
            KeyedContent.fillRecord(device, layout(), p, key, hasRow);
            PublishResult r = node.cache().publish(spec, p).toCompletableFuture().join();
            if (!(r instanceof PublishResult.Stored)) {
                throw new IllegalStateException("publish of " + key + " answered " + r);
            }
            keys.add(key);
        }
        return keys;
    }

    /**
     * Restores the chain of {@code blocks} (published by {@link #publishChain}: a row at the last one) into fresh
     * device placements, unless recomputing is estimated faster than an hour.
     */
    RestoreResult restore(String ns, long... blocks) {
        long[] chain = ChainHash.chain(blocks);
        List<DevicePlacement> targets = new ArrayList<>();
        for (int i = 0; i < chain.length; i++) {
            boolean hasRow = i == chain.length - 1;
            long base = device.allocateDevice(DevicePlacement.bytesNeeded(layout(), hasRow));
            deviceAllocations.add(base);
            targets.add(DevicePlacement.contiguous(layout(), base, hasRow));
        }
        return node.cache().restore(ns, chain, targets, Duration.ofHours(1)).toCompletableFuture().join();
    }

    /** The value of the {@code node} label on this node's metrics. */
    String metricsNode() {
        return node.cache().status().toCompletableFuture().join().metricsNode();
    }

    HttpResponse<String> get(String path) {
        return send("GET", path, null, null);
    }

    HttpResponse<String> send(String method, String path, String token, HttpRequest.BodyPublisher body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : body);
        if (token != null) {
            b.header("Authorization", "Bearer " + token);
        }
        try {
            return http.send(b.build(), HttpResponse.BodyHandlers.ofString());
        } catch (IOException e) {
            throw new IllegalStateException(method + " " + path + " failed: " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        node.close();
        http.close();
        deviceAllocations.forEach(device::freeDevice);
        device.close();
    }
    private static final ObjectMapper JSON = new ObjectMapper();

    /** The JSON body of an answer that must have {@code status} and a JSON content type (the admin tests' check). */
    static JsonNode json(HttpResponse<String> r, int status) {
        assertEquals(status, r.statusCode(), r.body());
        assertTrue(r.headers().firstValue("Content-Type").orElse("").startsWith("application/json"), r.body());
        try {
            return JSON.readTree(r.body());
        } catch (IOException e) {
            throw new AssertionError("not JSON: " + r.body(), e);
        }
    }
}
