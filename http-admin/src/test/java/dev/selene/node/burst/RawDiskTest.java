package dev.selene.node.burst;

import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The burst's raw O_DIRECT baseline on the real disk: where it writes, what it leaves, and when it does not run. */
class RawDiskTest {

    private static Path tier(String name) throws Exception {
        return Files.createTempDirectory(Files.createDirectories(Path.of("target", "raw-disk-tests")), name);
    }

    @Test
    void theScratchDirectory_isBesideTheTier_neverInsideIt() throws Exception {
        Path tier = tier("beside");
        Path scratch = RawDisk.beside(tier);
        assertEquals(tier.toAbsolutePath().normalize().getParent(), scratch.getParent());
        assertEquals(tier.getFileName() + ".raw-baseline", scratch.getFileName().toString());
    }

    @Test
    void measure_writesThenReadsWithODirect_andLeavesNothingBehind() throws Exception {
        Path scratch = RawDisk.beside(tier("measure"));
        RawDisk.Result r = RawDisk.measure(scratch, 8L << 20, 1L << 20, 2);
        assertTrue(r.writeGbps() > 0 && r.readGbps() > 0, r.toString());
        assertEquals(8L << 20, r.bytes(), "eight files of 1 MiB");
        RawDisk.Result both = r.plus(r);
        assertEquals(2 * r.bytes(), both.bytes());
        assertEquals(r.writeGbps(), both.writeGbps(), 1e-9, "two halves: their bytes over their times");
        assertFalse(Files.exists(scratch), "the scratch directory is deleted");
    }

    @Test
    void aBaselineThatDoesNotFitInHalfTheFreeSpace_isNotRun_andSaysWhyInOneLine() throws Exception {
        Path scratch = RawDisk.beside(tier("too-big"));
        long free = Files.getFileStore(scratch.getParent()).getUsableSpace();
        RawDisk.BaselineException e = assertThrows(RawDisk.BaselineException.class,
                () -> RawDisk.measure(scratch, free, free, 2));
        assertTrue(e.getMessage().startsWith("not run: ") && e.getMessage().contains("bytes free beside the tier"),
                e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line for the report");
        assertFalse(Files.exists(scratch), "nothing written");
    }

    @Test
    void aLeftoverFromAKilledRun_isRemoved() throws Exception {
        Path tier = tier("leftover");
        Path scratch = RawDisk.beside(tier);
        Files.createDirectories(scratch);
        Files.write(scratch.resolve("raw-0.bin"), new byte[4096]);
        RawDisk.removeLeftover(tier);
        assertFalse(Files.exists(scratch));
        assertTrue(Files.isDirectory(tier), "the tier itself is untouched");
    }
}
