package dev.selene.node.admin;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A node with a disk tier: its records, queue depth and restore estimator in /status and /metrics (B19). */
class AdminDiskStatusTest {

    @Test
    void diskTier_figuresInStatusAndMetrics_afterADrain() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "admin-disk")), "node");
        try (TestNode t = new TestNode(Map.of("selene.disk.dir", dir.toString(), "selene.disk.size", "64m"))) {
            t.publishChain("ns", 1, 2, 3);
            var report = t.node.cache().drain(Duration.ofSeconds(20)).toCompletableFuture().join();
            assertEquals(3, report.written());
            JsonNode disk = null;
            for (int i = 0; i < 100 && (disk == null || disk.path("records").asInt() != 3); i++) {
                Thread.sleep(50); // the status is sampled every 100 ms in this node
                JsonNode status = new ObjectMapper().readTree(t.get("/status").body());
                for (JsonNode tier : status.get("tiers")) {
                    if (tier.path("tier").asText().equals("disk")) {
                        disk = tier;
                    }
                }
            }
            assertEquals(3, disk.path("records").asInt(), String.valueOf(disk));
            assertTrue(disk.path("readEstimateBytesPerSecond").asLong() > 0, String.valueOf(disk));
            // Kamon hands a snapshot to the Prometheus reporter once per tick: poll until one holds the sample.
            Map<String, String> node = Map.of("node", t.metricsNode());
            Map<String, String> diskTier = Map.of("node", t.metricsNode(), "tier", "disk");
            Scrape metrics = Scrape.parse("");
            for (int i = 0; i < 200 && metrics.value("selene_records", diskTier) != 3; i++) {
                Thread.sleep(50);
                metrics = Scrape.parse(t.get("/metrics").body());
            }
            assertEquals(3, metrics.value("selene_records", diskTier), String.valueOf(metrics));
            assertEquals(0, metrics.value("selene_disk_queue_depth", node), "queue depth exported, drained");
            assertTrue(metrics.value("selene_disk_read_estimate_bytes_per_second", node) > 0,
                    "estimator state exported");
            assertTrue(metrics.value("selene_disk_used_bytes", node) > 0, "disk bytes exported");
        }
    }

    @Test
    void aDiskTierLargerThanItsDisk_showsTheSizeItRunsWith_besideTheConfiguredOne() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "admin-disk")), "node");
        long configured = 1L << 50; // 1 PiB: more than this machine's disk holds
        try (TestNode t = new TestNode(Map.of("selene.disk.dir", dir.toString(), "selene.disk.size", "1024t"))) {
            JsonNode disk = null;
            for (int i = 0; i < 100 && (disk == null || !disk.has("records")); i++) {
                Thread.sleep(50); // the status is sampled every 100 ms in this node
                for (JsonNode tier : new ObjectMapper().readTree(t.get("/status").body()).get("tiers")) {
                    if (tier.path("tier").asText().equals("disk")) {
                        disk = tier;
                    }
                }
            }
            assertEquals(configured, disk.path("configuredBytes").asLong(), String.valueOf(disk));
            long usable = Files.getFileStore(dir).getUsableSpace();
            assertTrue(disk.path("bytes").asLong() > 0 && disk.path("bytes").asLong() <= usable,
                    "the tier's size now, what the disk holds: " + disk);
        }
    }

    @Test
    void recordsHeldOnlyOnDisk_areListedAndDescribed_afterARestart() throws Exception {
        Path dir = Files.createTempDirectory(Files.createDirectories(Path.of("target", "admin-disk")), "node");
        Map<String, String> settings = Map.of("selene.disk.dir", dir.toString(), "selene.disk.size", "64m");
        java.util.List<dev.selene.engine.key.RecordKey> keys;
        try (TestNode t = new TestNode(settings)) {
            keys = t.publishChain("ondisk", 7, 8);
            assertEquals(2, t.node.cache().drain(Duration.ofSeconds(20)).toCompletableFuture().join().written());
            JsonNode clean = new ObjectMapper().readTree(t.get("/records/ondisk/" + keys.get(1).hashHex()).body());
            assertEquals("[\"memory\",\"disk\"]", clean.get("locations").toString(), "resident and on disk");
        }
        try (TestNode t = new TestNode(settings)) {
            JsonNode page = new ObjectMapper().readTree(t.get("/records?namespace=ondisk&tier=disk").body());
            assertEquals(2, page.get("total").asInt(), String.valueOf(page));
            assertEquals("durable_only", page.get("records").get(0).get("state").asText());
            assertEquals(0, new ObjectMapper().readTree(t.get("/records?namespace=ondisk&tier=memory").body())
                    .get("total").asInt());
            JsonNode r = new ObjectMapper().readTree(t.get("/records/ondisk/" + keys.get(1).hashHex()).body());
            assertEquals("on_disk", r.get("state").asText(), String.valueOf(r));
            assertEquals("[\"disk\"]", r.get("locations").toString());
            assertTrue(r.get("chainComplete").asBoolean());
            assertEquals(2, r.get("chain").size());
        }
    }
}
