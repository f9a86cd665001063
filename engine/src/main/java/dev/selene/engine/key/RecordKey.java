package dev.selene.engine.key;

import java.util.HexFormat;
import java.util.Objects;

/**
 * Identity of one record: the namespace (model or tenant) and the chained hash of the prefix it ends.
 *
 * <p>Written as {@code namespace/0123456789abcdef} (16 lower-case hex digits) in logs, files and URLs.
 */
public record RecordKey(String namespace, long hash) {

    /** Longest namespace accepted; namespaces travel in file headers and URLs. */
    public static final int MAX_NAMESPACE_CHARS = 128;

    public RecordKey {
        Objects.requireNonNull(namespace, "namespace");
        String problem = namespaceProblem(namespace);
        if (problem != null) {
            throw new IllegalArgumentException(problem);
        }
    }

    /** Why {@code s} is not a valid namespace, in one line naming what is allowed; null when it is one. */
    public static String namespaceProblem(String s) {
        return isValidNamespace(s) ? null : "namespace '" + s + "' is invalid; allowed: 1.." + MAX_NAMESPACE_CHARS
                + " characters of [A-Za-z0-9._-]";
    }

    /** Whether {@code s} is a valid namespace: 1..128 characters of letters, digits, '.', '_' and '-'. */
    public static boolean isValidNamespace(String s) {
        if (s == null || s.isEmpty() || s.length() > MAX_NAMESPACE_CHARS) {
            return false;
        }
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '.' || c == '_' || c == '-';
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /** The key's hash as 16 lower-case hex digits. */
    public String hashHex() {
        return HexFormat.of().toHexDigits(hash);
    }

    /** Parses 1..16 hex digits into a hash; an {@link IllegalArgumentException} with a clear message otherwise. */
    public static long parseHash(String hex) {
        if (hex == null || hex.isEmpty() || hex.length() > 16) {
            throw new IllegalArgumentException("key '" + hex + "' is malformed; expected 1..16 hex digits");
        }
        for (int i = 0; i < hex.length(); i++) {
            char c = hex.charAt(i);
            if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) {
                throw new IllegalArgumentException("key '" + hex + "' is malformed; expected 1..16 hex digits");
            }
        }
        return Long.parseUnsignedLong(hex, 16);
    }

    /** The key of a child of this record whose block has content hash {@code blockHash}. */
    public RecordKey child(long blockHash) {
        return new RecordKey(namespace, ChainHash.next(hash, blockHash));
    }

    @Override
    public String toString() {
        return namespace + "/" + hashHex();
    }
}
