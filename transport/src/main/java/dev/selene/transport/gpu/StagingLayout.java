package dev.selene.transport.gpu;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Where each piece of a batch sits in the device staging buffer of {@link CopyMode#KERNEL_STAGED}, and the copy-engine
 * transfers that move the staging buffer to or from the host slots.
 *
 * <p>Pieces are ordered by host address and grouped into <em>runs</em>: maximal sequences of pieces whose host ranges
 * follow one another without a gap. Each run occupies one contiguous stretch of staging, so it moves in one
 * transfer; runs start on {@value #RUN_ALIGNMENT_BYTES}-byte boundaries. Records whose slots are contiguous (a fresh
 * pool allocates them so) become one run each, or fewer when adjacent records share a batch; a partly used last
 * row piece ends its run.
 */
final class StagingLayout {

    /** Alignment of each run's start in the staging buffer. */
    static final int RUN_ALIGNMENT_BYTES = 256;

    private final long[] stagingOffsets;
    private final List<Run> runs;
    private final long stagingBytes;

    private StagingLayout(long[] stagingOffsets, List<Run> runs, long stagingBytes) {
        this.stagingOffsets = stagingOffsets;
        this.runs = runs;
        this.stagingBytes = stagingBytes;
    }

    /** The layout of pieces {@code 0 .. count-1} with host addresses {@code host} and lengths {@code lengths}. */
    static StagingLayout of(long[] host, long[] lengths, int count) {
        Integer[] order = new Integer[count];
        for (int i = 0; i < count; i++) {
            order[i] = i;
        }
        Arrays.sort(order, (a, b) -> Long.compareUnsigned(host[a], host[b]));
        long[] offsets = new long[count];
        List<Run> runs = new ArrayList<>();
        long cursor = 0;
        long runHost = 0;
        long runStaging = 0;
        long runBytes = 0;
        boolean open = false;
        for (int k = 0; k < count; k++) {
            int i = order[k];
            long length = lengths[i];
            if (open && host[i] == runHost + runBytes) {
                offsets[i] = runStaging + runBytes;
                runBytes += length;
                continue;
            }
            if (open) {
                runs.add(new Run(runHost, runStaging, runBytes));
                cursor = runStaging + runBytes;
            }
            runHost = host[i];
            runStaging = align(cursor);
            runBytes = length;
            offsets[i] = runStaging;
            open = true;
        }
        if (open) {
            runs.add(new Run(runHost, runStaging, runBytes));
            cursor = runStaging + runBytes;
        }
        runs.removeIf(r -> r.bytes == 0);
        return new StagingLayout(offsets, List.copyOf(runs), cursor);
    }

    /** Offset in the staging buffer of piece {@code piece}. */
    long stagingOffset(int piece) {
        return stagingOffsets[piece];
    }

    /** The copy-engine transfers, in host address order. */
    List<Run> runs() {
        return runs;
    }

    /** Bytes of staging buffer the batch needs. */
    long stagingBytes() {
        return stagingBytes;
    }

    private static long align(long offset) {
        return (offset + RUN_ALIGNMENT_BYTES - 1) & -(long) RUN_ALIGNMENT_BYTES;
    }

    /** One copy-engine transfer between {@code bytes} host bytes from {@code host} and staging at {@code staging}. */
    record Run(long host, long staging, long bytes) {
    }
}
