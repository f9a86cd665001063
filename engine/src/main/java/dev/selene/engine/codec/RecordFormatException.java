package dev.selene.engine.codec;

import java.io.IOException;
import java.util.Locale;
import java.util.Objects;

/**
 * A record file that cannot be used as it is, with the {@link Kind} of failure so that callers can count,
 * quarantine or report each kind apart.
 */
public final class RecordFormatException extends IOException {

    /** Why a record file was rejected. */
    public enum Kind {
        /** Bad magic, a checksum mismatch, or fields that contradict each other. */
        CORRUPT,
        /** The file is shorter than its header says. */
        TRUNCATED,
        /** The format version is below the oldest this reader knows. */
        TOO_OLD,
        /** The format version is above {@link RecordFileFormat#VERSION_CURRENT}: written by a newer Selene. */
        TOO_NEW,
        /** A well-formed file written under another layout than the reader's. */
        LAYOUT_MISMATCH;

        /** The kind as a bounded metric label, e.g. {@code layout_mismatch}. */
        public String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Kind kind;

    public RecordFormatException(Kind kind, String message) {
        super(Objects.requireNonNull(kind, "kind").label() + ": " + message);
        this.kind = kind;
    }

    private RecordFormatException(Kind kind, String message, RecordFormatException cause) {
        super(message, cause);
        this.kind = kind;
    }

    /** What was wrong with the file. */
    public Kind kind() {
        return kind;
    }

    /** The same failure with {@code source} (usually the file's path) in front of its message. */
    public RecordFormatException withSource(String source) {
        return new RecordFormatException(kind, "record file " + source + ": " + getMessage(), this);
    }
}
