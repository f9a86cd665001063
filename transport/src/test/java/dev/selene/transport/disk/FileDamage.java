package dev.selene.transport.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** Damages record files the way disks and crashes do: a flipped bit, a lost tail, an overwritten field. */
final class FileDamage {

    private FileDamage() {
    }

    static void flipBit(Path file, long offset, int bit) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer one = ByteBuffer.allocate(1);
            channel.read(one, offset);
            one.put(0, (byte) (one.get(0) ^ (1 << bit))).rewind();
            channel.write(one, offset);
            channel.force(true);
        }
    }

    static void truncate(Path file, long length) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.truncate(length);
            channel.force(true);
        }
    }

    static void putInt(Path file, long offset, int value) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
            channel.write(ByteBuffer.allocate(Integer.BYTES).order(ByteOrder.LITTLE_ENDIAN).putInt(0, value), offset);
            channel.force(true);
        }
    }
}
