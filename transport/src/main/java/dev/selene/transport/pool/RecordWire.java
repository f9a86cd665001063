package dev.selene.transport.pool;

import dev.selene.engine.key.RecordKey;
import dev.selene.engine.key.RecordSpec;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

import java.nio.charset.StandardCharsets;

/**
 * How a record is named on the data plane: a key, or a spec with its image's length, after a request's frame header.
 *
 * <pre>
 * Key  --&gt; NamespaceLength:short, Namespace:UTF-8, Hash:long
 * Spec --&gt; Key, HasParent:byte, [ParentHash:long], HasRow:byte, ImageBytes:long     (a parent shares the namespace)
 * </pre>
 */
final class RecordWire {

    private RecordWire() {
    }

    static ByteBuf key(RecordKey key) {
        ByteBuf b = Unpooled.buffer(64);
        writeKey(b, key);
        return b;
    }

    static ByteBuf spec(RecordSpec spec, long imageBytes) {
        ByteBuf b = Unpooled.buffer(96);
        writeKey(b, spec.key());
        b.writeByte(spec.parent() == null ? 0 : 1);
        if (spec.parent() != null) {
            b.writeLong(spec.parent().hash());
        }
        b.writeByte(spec.hasRow() ? 1 : 0);
        b.writeLong(imageBytes);
        return b;
    }

    static RecordKey readKey(ByteBuf b) {
        int n = b.readUnsignedShort();
        if (n > 4 * RecordKey.MAX_NAMESPACE_CHARS) {
            throw new TransferFailedException("a record name of " + n + " bytes");
        }
        String namespace = b.readCharSequence(n, StandardCharsets.UTF_8).toString();
        try {
            return new RecordKey(namespace, b.readLong());
        } catch (IllegalArgumentException e) {
            throw new TransferFailedException("an invalid record name: " + e.getMessage());
        }
    }

    /** A spec and its image's length, as read from {@code b}. */
    record Named(RecordSpec spec, long imageBytes) {
    }

    static Named readSpec(ByteBuf b) {
        RecordKey key = readKey(b);
        RecordKey parent = b.readByte() == 0 ? null : new RecordKey(key.namespace(), b.readLong());
        boolean hasRow = b.readByte() != 0;
        long imageBytes = b.readLong();
        if (imageBytes < 0) {
            throw new TransferFailedException("an image of " + imageBytes + " bytes");
        }
        return new Named(new RecordSpec(key, parent, hasRow), imageBytes);
    }

    private static void writeKey(ByteBuf b, RecordKey key) {
        byte[] ns = key.namespace().getBytes(StandardCharsets.UTF_8);
        b.writeShort(ns.length);
        b.writeBytes(ns);
        b.writeLong(key.hash());
    }
}
