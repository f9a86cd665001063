package dev.selene.transport.disk;

import dev.selene.engine.codec.RecordFormatException;
import dev.selene.engine.codec.RecordHeader;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import dev.selene.engine.layout.Layout;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * The disk tier's start-up pass over its directory (recovery): deletes leftover temporaries, validates every record
 * file, moves those that fail into {@value RecordFileNames#QUARANTINE_DIRECTORY}/ counted by failure kind, and
 * returns the valid records with their last use (file mtime). Only files named as Selene names them are touched; a
 * directory whose record files were written under another layout, none under this one, is refused
 * ({@link OtherLayout}) before anything is touched.
 *
 * <p>Pruning records whose chain is incomplete is the caller's step, since a parent may live in another tier: see
 * {@link dev.selene.engine.codec.ChainCompleteness}. Quarantined files are kept, not deleted, so that an operator
 * can inspect them or move files written under another layout back.
 */
public final class RecoveryScan {

    private static final Logger LOG = LoggerFactory.getLogger(RecoveryScan.class);

    /** How much of each file to check. */
    public enum Depth {
        /** Header, footer and length (from version 2 this covers all but the body's bytes); fast. */
        HEADERS,
        /** Every byte and checksum: reads the whole tier. */
        FULL
    }

    /**
     * A record file that passed validation.
     *
     * @param spec      the record it holds
     * @param file      its path
     * @param fileBytes its length on disk
     * @param lastUse   its modification time, taken as the record's last use
     */
    public record Recovered(RecordSpec spec, Path file, long fileBytes, Instant lastUse) {
    }

    /**
     * What a scan found.
     *
     * @param records            valid records, by file name
     * @param temporariesDeleted leftover {@code .tmp} files removed
     * @param quarantinedByKind  rejected record files by failure kind (files unreadable for I/O errors count as
     *                           {@code unreadable} instead)
     * @param unreadable         record files that could not be read at all (an I/O error, not a format problem)
     * @param quarantined        where the rejected files now are
     */
    public record Result(List<Recovered> records, int temporariesDeleted,
                         Map<RecordFormatException.Kind, Integer> quarantinedByKind, int unreadable,
                         List<Path> quarantined) {

        /** Rejected files of every kind, unreadable ones included. */
        public int rejected() {
            return unreadable + quarantinedByKind.values().stream().mapToInt(Integer::intValue).sum();
        }
    }

    /**
     * The directory holds record files written under another layout than the node's and none valid under its own:
     * most likely the node was started with the wrong layout, so the scan refuses rather than move the tier aside.
     */
    public static final class OtherLayout extends IOException {

        private final int files;

        OtherLayout(int files, RecordFormatException first) {
            super(files + " record file" + (files == 1 ? "" : "s") + " written under another layout (the first: "
                    + first.getMessage() + ")", first);
            this.files = files;
        }

        /** How many record files were written under another layout. */
        public int files() {
            return files;
        }
    }

    private RecoveryScan() {
    }

    /** Scans the locked directory at {@link Depth#HEADERS} depth. */
    public static Result run(DirectoryLock lock, RecordIo io, Layout layout) throws IOException {
        return run(lock, io, layout, Depth.HEADERS);
    }

    /** Scans the directory that {@code lock} holds, validating record files under {@code layout} to {@code depth}. */
    public static Result run(DirectoryLock lock, RecordIo io, Layout layout, Depth depth) throws IOException {
        Objects.requireNonNull(io, "io");
        Objects.requireNonNull(layout, "layout");
        Objects.requireNonNull(depth, "depth");
        if (!lock.isHeld()) {
            throw new IllegalStateException("recovery needs the directory lock, but " + lock + " is released");
        }
        Path dir = lock.directory();
        List<Recovered> records = new ArrayList<>();
        Map<RecordFormatException.Kind, Integer> byKind = new EnumMap<>(RecordFormatException.Kind.class);
        List<Path> quarantined = new ArrayList<>();
        int temporaries = 0;
        int unreadable = 0;
        // Every record file is read before anything is deleted or moved: a directory whose valid records were all
        // written under another layout (the node started with the wrong one) is refused, and nothing in it is
        // touched. Where records of this layout are found too, those of another are quarantined as any bad file.
        List<Path> leftovers = new ArrayList<>();
        Map<Path, Exception> rejects = new LinkedHashMap<>();
        int otherLayout = 0;
        RecordFormatException firstOtherLayout = null;
        for (Path file : regularFiles(dir)) {
            if (RecordFileNames.isTemporary(file)) {
                leftovers.add(file);
                continue;
            }
            if (!RecordFileNames.isRecordFile(file)) {
                continue; // not a file Selene names: not Selene's to judge
            }
            try {
                records.add(validate(io, file, layout, depth));
            } catch (RecordFormatException e) {
                if (e.kind() == RecordFormatException.Kind.LAYOUT_MISMATCH) {
                    otherLayout++;
                    firstOtherLayout = firstOtherLayout == null ? e : firstOtherLayout;
                }
                rejects.put(file, e);
            } catch (IOException e) {
                rejects.put(file, e);
            }
        }
        if (firstOtherLayout != null && records.isEmpty()) {
            throw new OtherLayout(otherLayout, firstOtherLayout);
        }
        for (Path file : leftovers) {
            Files.deleteIfExists(file);
            temporaries++;
        }
        for (Map.Entry<Path, Exception> r : rejects.entrySet()) {
            Path file = r.getKey();
            if (r.getValue() instanceof RecordFormatException e) {
                byKind.merge(e.kind(), 1, Integer::sum);
                LOG.warn("quarantining {}: {}", file, e.getMessage());
            } else {
                unreadable++;
                LOG.warn("quarantining unreadable {}: {}", file, r.getValue().toString());
            }
            quarantine(file, dir).ifPresent(quarantined::add);
        }
        if (temporaries > 0 || !quarantined.isEmpty()) {
            syncDirectory(dir);
        }
        if (!quarantined.isEmpty()) {
            syncDirectory(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY));
        }
        return new Result(List.copyOf(records), temporaries, Collections.unmodifiableMap(byKind), unreadable,
                List.copyOf(quarantined));
    }

    private static Recovered validate(RecordIo io, Path file, Layout layout, Depth depth) throws IOException {
        RecordHeader header = depth == Depth.FULL ? io.verify(file, layout) : io.readHeader(file);
        try {
            header.requireLayout(layout);
        } catch (RecordFormatException e) {
            throw e.withSource(file.toString());
        }
        Optional<RecordKey> named = RecordFileNames.keyOf(file);
        if (named.isEmpty() || !named.get().equals(header.key())) {
            throw new RecordFormatException(RecordFormatException.Kind.CORRUPT, "its name says "
                    + named.map(RecordKey::toString).orElse("nothing parseable") + " but its header holds "
                    + header.key()).withSource(file.toString());
        }
        BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
        return new Recovered(header.spec(), file, attributes.size(), attributes.lastModifiedTime().toInstant());
    }

    private static List<Path> regularFiles(Path dir) throws IOException {
        List<Path> files = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path entry : entries) {
                if (Files.isRegularFile(entry)) {
                    files.add(entry);
                }
            }
        }
        files.sort(null);
        return files;
    }

    /**
     * Moves {@code file} of the disk tier {@code dir} into its quarantine directory, under its own name or, when a
     * file of that name is already there (the same record quarantined before), that name with {@code .1},
     * {@code .2}, ...: every quarantined file is kept. Returns where it now is.
     */
    public static Path moveToQuarantine(Path file, Path dir) throws IOException {
        Path quarantine = Files.createDirectories(dir.resolve(RecordFileNames.QUARANTINE_DIRECTORY));
        Path destination = quarantine.resolve(file.getFileName());
        for (int n = 1; Files.exists(destination); n++) {
            destination = quarantine.resolve(file.getFileName() + "." + n);
        }
        Files.move(file, destination, StandardCopyOption.ATOMIC_MOVE);
        return destination;
    }

    private static Optional<Path> quarantine(Path file, Path dir) {
        try {
            return Optional.of(moveToQuarantine(file, dir));
        } catch (IOException e) {
            LOG.error("could not quarantine {}; it stays in place and will be rejected again: {}", file, e.toString());
            return Optional.empty();
        }
    }

    private static void syncDirectory(Path dir) throws IOException {
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        }
    }
}
