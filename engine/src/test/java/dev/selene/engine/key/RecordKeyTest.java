package dev.selene.engine.key;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RecordKeyTest {

    @Test
    void hashHex_isSixteenLowerCaseDigits_andParsesBack() {
        long seed = Long.getLong("selene.seed", System.nanoTime());
        System.out.println("RecordKeyTest seed=" + seed);
        Random random = new Random(seed);
        long[] hashes = new long[1000];
        hashes[0] = 0;
        hashes[1] = -1;
        hashes[2] = Long.MIN_VALUE;
        hashes[3] = Long.MAX_VALUE;
        for (int i = 4; i < hashes.length; i++) {
            hashes[i] = random.nextLong();
        }
        for (long h : hashes) {
            String hex = new RecordKey("ns", h).hashHex();
            assertEquals(16, hex.length(), hex);
            assertTrue(hex.matches("[0-9a-f]{16}"), hex);
            assertEquals(h, RecordKey.parseHash(hex), "seed=" + seed + " hash=" + h);
        }
    }

    @Test
    void toString_isNamespaceSlashHex() {
        assertEquals("model-a/00000000000000ff", new RecordKey("model-a", 255).toString());
        assertEquals("m/ffffffffffffffff", new RecordKey("m", -1).toString());
    }

    @Test
    void parseHash_acceptsShortAndUpperCaseHex() {
        assertEquals(255, RecordKey.parseHash("ff"));
        assertEquals(255, RecordKey.parseHash("FF"));
        assertEquals(1, RecordKey.parseHash("1"));
        assertEquals(-1, RecordKey.parseHash("ffffffffffffffff"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "xyz", "12345678901234567", "0x12", "-1", " 1", "ab cd"})
    void parseHash_ofMalformedInput_saysWhatItExpected(String hex) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RecordKey.parseHash(hex));

        assertEquals("key '" + hex + "' is malformed; expected 1..16 hex digits", e.getMessage());
    }

    @Test
    void parseHash_ofNull_isMalformed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RecordKey.parseHash(null));

        assertTrue(e.getMessage().contains("malformed"), e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"+ff", "+1"})
    void parseHash_ofALeadingPlus_isMalformed(String hex) {
        // Long.parseUnsignedLong allows a leading '+', so "+ff" aliases 00000000000000ff in URLs and file names.
        assertThrows(IllegalArgumentException.class, () -> RecordKey.parseHash(hex));
    }

    @ParameterizedTest
    @ValueSource(strings = {"\uFF11\uFF12", "\u0661\u0662"})
    void parseHash_ofNonAsciiDigits_isMalformed(String hex) {
        // Character.digit accepts full-width and Arabic-Indic digits: "１２" would parse as 0x12.
        assertThrows(IllegalArgumentException.class, () -> RecordKey.parseHash(hex));
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "a b", "a/b", "ns:1", "ümlaut", "tab\t"})
    void constructor_withAnInvalidNamespace_namesItAndTheAllowedCharacters(String ns) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new RecordKey(ns, 1));

        assertEquals("namespace '" + ns + "' is invalid; allowed: 1..128 characters of [A-Za-z0-9._-]",
                e.getMessage());
    }

    @Test
    void constructor_acceptsTheLongestNamespaceAndRejectsOneMore() {
        String longest = "n".repeat(RecordKey.MAX_NAMESPACE_CHARS);

        assertEquals(longest, new RecordKey(longest, 1).namespace());
        assertThrows(IllegalArgumentException.class, () -> new RecordKey(longest + "n", 1));
    }

    @Test
    void constructor_withANullNamespace_namesIt() {
        NullPointerException e = assertThrows(NullPointerException.class, () -> new RecordKey(null, 1));

        assertEquals("namespace", e.getMessage());
    }

    @Test
    void isValidNamespace_acceptsLettersDigitsDotUnderscoreDash() {
        assertTrue(RecordKey.isValidNamespace("Qwen2.5-72B_tenant.a"));
        assertTrue(!RecordKey.isValidNamespace(null));
    }

    @Test
    void equality_isByNamespaceAndHash() {
        assertEquals(new RecordKey("a", 1), new RecordKey("a", 1));
        assertNotEquals(new RecordKey("a", 1), new RecordKey("b", 1));
        assertNotEquals(new RecordKey("a", 1), new RecordKey("a", 2));
    }

    @Test
    void child_chainsTheParentHashWithTheBlockHash() {
        RecordKey root = new RecordKey("ns", ChainHash.ROOT);

        RecordKey child = root.child(42);

        assertEquals("ns", child.namespace());
        assertEquals(ChainHash.next(ChainHash.ROOT, 42), child.hash());
    }
}
