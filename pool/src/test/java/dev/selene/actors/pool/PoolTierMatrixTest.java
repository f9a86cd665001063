package dev.selene.actors.pool;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.value.DrainReport;
import dev.selene.actors.value.LookupResult;
import dev.selene.actors.value.RestoreResult;
import dev.selene.actors.value.Tier;
import dev.selene.engine.key.RecordSpec;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static dev.selene.actors.pool.PoolFixture.await;
import static dev.selene.actors.pool.PoolFixture.chain;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The tier matrix with a pool (B7): pool only (intake slots, no warm tier), warm + pool, disk + pool and
 * warm + disk + pool each publish more than host memory holds, restore their own chain byte-identically, drain,
 * and leave every record in the pool for another host, on two managers in a loopback cluster.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PoolTierMatrixTest {

    private final PoolFixture pool = new PoolFixture();

    @BeforeAll
    void managers() throws IOException {
        pool.manager(512, 2);
        pool.manager(512, 2);
    }

    @AfterAll
    void stop() {
        pool.close();
    }

    @ParameterizedTest(name = "warm {0} slots, disk {1}")
    @CsvSource({"0, false", "10, false", "0, true", "10, true"})
    void everyPoolShape_publishesEvictsRestoresAndDrains_andAnotherHostRestoresFromThePool(int warmSlots,
                                                                                         boolean disk)
            throws Exception {
        String namespace = "matrix-" + warmSlots + (disk ? "-disk" : "");
        Path dir = null;
        if (disk) {
            Files.createDirectories(Path.of("target", "pool-tests"));
            dir = Files.createTempDirectory(Path.of("target", "pool-tests"), "matrix");
        }
        SeleneCache a = pool.host(warmSlots, dir == null ? null : dir.toString());
        // 12 records of 5 slots: more than the host's memory (the intake of 10 slots plus the warm tier).
        List<RecordSpec> specs = pool.publishChain(a, namespace, 1, 12);
        RestoreResult own = pool.restoreAndVerify(a, specs);
        assertTrue(own.fromMemory() < 12, "part of the chain came from a durable tier: " + own);
        DrainReport drained = await(a.drain(Duration.ofSeconds(30)));
        assertEquals(0, drained.skipped(), drained.toString());

        SeleneCache b = pool.host(0, null);
        LookupResult found = await(b.lookup(namespace, chain(specs)));
        assertEquals(12, found.records().size(), found.missReason());
        assertTrue(found.records().stream().allMatch(l -> l.tier() == Tier.POOL), found.toString());
        assertEquals(12, pool.restoreAndVerify(b, specs).fromPool());
        pool.stopHost(a);
        pool.stopHost(b);
    }

    /** #22 item 4: a host with a warm tier and the pool but no disk, asked to drain on shutdown, drains to the pool. */
    @Test
    void aHostWithoutADisk_thatDrainsOnShutdown_leavesWhatWasOnlyInItsMemoryInThePool() throws Exception {
        String namespace = "drain-on-close";
        SeleneCache a = pool.host(60, null, true);
        // 4 records of 5 slots in a warm tier of 60: no pressure, so they are only in its memory when it closes.
        List<RecordSpec> specs = pool.publishChain(a, namespace, 1, 4);
        assertEquals(4, pool.restoreAndVerify(a, specs).fromMemory(), "nothing was retired before the close");
        pool.stopHost(a);

        SeleneCache b = pool.host(0, null);
        LookupResult found = await(b.lookup(namespace, chain(specs)));
        assertEquals(4, found.records().size(), "the drain at close retired every record: " + found.missReason());
        assertEquals(4, pool.restoreAndVerify(b, specs).fromPool());
        pool.stopHost(b);
    }
}
