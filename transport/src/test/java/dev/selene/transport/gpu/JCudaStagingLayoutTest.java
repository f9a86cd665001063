package dev.selene.transport.gpu;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class JCudaStagingLayoutTest {

    @Test
    void adjacentPieces_inAnyOrder_becomeOneRun() {
        long[] host = {0x10000 + 2 * 4096, 0x10000, 0x10000 + 4096};
        long[] lengths = {4096, 4096, 4096};

        StagingLayout layout = StagingLayout.of(host, lengths, 3);

        assertEquals(List.of(new StagingLayout.Run(0x10000, 0, 3 * 4096)), layout.runs());
        assertEquals(2 * 4096, layout.stagingOffset(0));
        assertEquals(0, layout.stagingOffset(1));
        assertEquals(4096, layout.stagingOffset(2));
        assertEquals(3 * 4096, layout.stagingBytes());
    }

    @Test
    void aPartlyUsedPiece_endsItsRun_andTheNextRunStartsAligned() {
        long[] host = {0x20000, 0x20000 + 4096, 0x20000 + 8192};
        long[] lengths = {4096, 1001, 4096};

        StagingLayout layout = StagingLayout.of(host, lengths, 3);

        assertEquals(List.of(new StagingLayout.Run(0x20000, 0, 4096 + 1001),
                new StagingLayout.Run(0x20000 + 8192, 5120, 4096)), layout.runs());
        assertEquals(5120, layout.stagingOffset(2));
        assertEquals(5120 + 4096, layout.stagingBytes());
    }

    @Test
    void zeroLengthPieces_moveNothing() {
        StagingLayout layout = StagingLayout.of(new long[] {0x1000, 0x9000}, new long[] {0, 0}, 2);

        assertTrue(layout.runs().isEmpty());
        assertEquals(0, layout.stagingBytes());
    }

    @Test
    void randomPieces_everyPieceLiesInsideItsRun_andRunsNeverOverlapInStaging() {
        long seed = System.nanoTime();
        Random random = new Random(seed);
        for (int round = 0; round < 200; round++) {
            int count = 1 + random.nextInt(64);
            long[] host = new long[count];
            long[] lengths = new long[count];
            int[] slots = random.ints(0, 256).distinct().limit(count).toArray();
            for (int i = 0; i < count; i++) {
                host[i] = 0x4000_0000L + slots[i] * 8192L;
                lengths[i] = random.nextBoolean() ? 8192 : 1 + random.nextInt(8192);
            }

            StagingLayout layout = StagingLayout.of(host, lengths, count);

            long previousEnd = 0;
            for (StagingLayout.Run run : layout.runs()) {
                assertTrue(run.staging() >= previousEnd, "seed " + seed);
                assertEquals(0, run.staging() % StagingLayout.RUN_ALIGNMENT_BYTES, "seed " + seed);
                previousEnd = run.staging() + run.bytes();
            }
            assertTrue(layout.stagingBytes() >= previousEnd, "seed " + seed);
            for (int i = 0; i < count; i++) {
                int piece = i;
                StagingLayout.Run run = layout.runs().stream()
                        .filter(r -> host[piece] >= r.host() && host[piece] + lengths[piece] <= r.host() + r.bytes())
                        .findFirst().orElseThrow(() -> new AssertionError("piece " + piece + " seed " + seed));
                assertEquals(run.staging() + (host[i] - run.host()), layout.stagingOffset(i), "seed " + seed);
            }
        }
    }
}
