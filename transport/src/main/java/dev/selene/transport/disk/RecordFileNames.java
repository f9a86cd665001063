package dev.selene.transport.disk;

import dev.selene.engine.key.RecordKey;

import java.nio.file.Path;
import java.util.Optional;

/**
 * How record files are named in the disk tier's directory: flat, one file per record,
 * {@code <namespace>@<16 hex digits of the key>.rec}; a write in progress adds {@code .tmp}.
 *
 * <p>'@' cannot occur in a namespace, so every name parses back to its key. The header, not the name, is the
 * authority: recovery quarantines a file whose header names another key.
 */
public final class RecordFileNames {

    /** Suffix of a committed record file. */
    public static final String RECORD_SUFFIX = ".rec";
    /** Suffix added to a record file's name while it is being written. */
    public static final String TEMPORARY_SUFFIX = ".tmp";
    /** Between namespace and key hash. */
    public static final char KEY_SEPARATOR = '@';
    /** Subdirectory that receives files that fail validation. */
    public static final String QUARANTINE_DIRECTORY = "quarantine";

    private static final int HASH_HEX_DIGITS = 16;

    private RecordFileNames() {
    }

    /** The committed file of {@code key} in {@code dir}. */
    public static Path recordFile(Path dir, RecordKey key) {
        return dir.resolve(key.namespace() + KEY_SEPARATOR + key.hashHex() + RECORD_SUFFIX);
    }

    /** The temporary a write of {@code recordFile} goes to before it is renamed into place. */
    public static Path temporaryFile(Path recordFile) {
        return recordFile.resolveSibling(recordFile.getFileName() + TEMPORARY_SUFFIX);
    }

    /**
     * Whether {@code file} is named as a committed record file is ({@code <namespace>@<16 lower-case hex
     * digits>.rec}): any other file in the directory, {@code notes.rec} included, is not Selene's and is left alone.
     */
    public static boolean isRecordFile(Path file) {
        return keyOf(file).isPresent();
    }

    /** Whether {@code file} is named as the temporary of a record file is (the same name and {@code .tmp}). */
    public static boolean isTemporary(Path file) {
        String name = file.getFileName().toString();
        return name.endsWith(RECORD_SUFFIX + TEMPORARY_SUFFIX)
                && keyOf(Path.of(name.substring(0, name.length() - TEMPORARY_SUFFIX.length()))).isPresent();
    }

    /** The key a record file's name claims, if the name is well formed. */
    public static Optional<RecordKey> keyOf(Path file) {
        String name = file.getFileName().toString();
        if (!name.endsWith(RECORD_SUFFIX)) {
            return Optional.empty();
        }
        String stem = name.substring(0, name.length() - RECORD_SUFFIX.length());
        int at = stem.lastIndexOf(KEY_SEPARATOR);
        if (at < 1 || stem.length() - at - 1 != HASH_HEX_DIGITS) {
            return Optional.empty();
        }
        String namespace = stem.substring(0, at);
        if (!RecordKey.isValidNamespace(namespace)) {
            return Optional.empty();
        }
        String hex = stem.substring(at + 1);
        try {
            RecordKey key = new RecordKey(namespace, RecordKey.parseHash(hex));
            // Only the name Selene writes for the key (lower-case hex): a node reads and deletes a record by that
            // name, so a file named otherwise (upper-case hex) would be counted and never served or removed.
            return key.hashHex().equals(hex) ? Optional.of(key) : Optional.empty();
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }
}
