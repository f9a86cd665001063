package dev.selene.engine.config;

import dev.selene.engine.layout.Layout;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CacheConfigTest {

    private static final Layout LAYOUT = Layout.deepseekTp4();
    private static final CacheConfig BASE = CacheConfig.memoryOnly(LAYOUT, 1L << 30);

    @Test
    void memoryOnly_hasTheDocumentedDefaults() {
        assertAll(
                () -> assertEquals(LAYOUT, BASE.layout()),
                () -> assertEquals(1L << 30, BASE.warmBytes()),
                () -> assertEquals(32, BASE.concurrency()),
                () -> assertEquals(0, BASE.windowSlots()),
                () -> assertEquals(CacheConfig.DEFAULT_HOST_BUDGET_BYTES, BASE.hostBudgetBytes()),
                () -> assertEquals("auto", BASE.device()),
                () -> assertNull(BASE.diskDir()),
                () -> assertFalse(BASE.poolEnabled()),
                () -> assertNull(BASE.maxAge(), "max age is off by default"),
                () -> assertFalse(BASE.drainOnShutdown()),
                () -> assertTrue(BASE.enabled()),
                () -> assertTrue(BASE.memoryOnly()));
    }

    @Test
    void enabled_whenAnyTierIsConfigured() {
        CacheConfig nothing = BASE.withWarmBytes(0);

        assertFalse(nothing.enabled(), "no warm, no disk, no pool: Disabled");
        assertTrue(nothing.withDisk("/tmp/selene", 1L << 30).enabled());
    }

    @Test
    void memoryOnly_isFalseOnceADiskIsConfigured() {
        CacheConfig withDisk = BASE.withDisk("/tmp/selene", 1L << 30);

        assertFalse(withDisk.memoryOnly());
        assertEquals("/tmp/selene", withDisk.diskDir());
        assertEquals(1L << 30, withDisk.diskBytes());
    }

    @Test
    void effectiveWindowSlots_isOneRecordWithARowUnlessSet() {
        assertEquals(31, BASE.effectiveWindowSlots());
        assertEquals(7, BASE.withWindowSlots(7).effectiveWindowSlots());
    }

    @Test
    void withMethods_changeOnlyTheirSetting() {
        CacheConfig c = BASE.withConcurrency(8).withHostBudgetBytes(1L << 33).withDevice("simulated")
                .withMaxAge(Duration.ofMinutes(5)).withDrainOnShutdown(true);

        assertAll(
                () -> assertEquals(8, c.concurrency()),
                () -> assertEquals(1L << 33, c.hostBudgetBytes()),
                () -> assertEquals("simulated", c.device()),
                () -> assertEquals(Duration.ofMinutes(5), c.maxAge()),
                () -> assertTrue(c.drainOnShutdown()),
                () -> assertEquals(BASE.warmBytes(), c.warmBytes()),
                () -> assertEquals(BASE.layout(), c.layout()));
        assertEquals(32, BASE.concurrency(), "the original is unchanged");
    }

    static Stream<Arguments> invalidSettings() {
        return Stream.of(
                Arguments.of("warm size -1 is invalid; allowed: 0 or more bytes",
                        (Executable) () -> BASE.withWarmBytes(-1)),
                Arguments.of("concurrency 0 is invalid; allowed: 1..65536",
                        (Executable) () -> BASE.withConcurrency(0)),
                Arguments.of("concurrency 65537 is invalid; allowed: 1..65536",
                        (Executable) () -> BASE.withConcurrency(65537)),
                Arguments.of("transfer window -1 is invalid; allowed: 0 or more slots",
                        (Executable) () -> BASE.withWindowSlots(-1)),
                Arguments.of("host budget 0 is invalid; allowed: more than 0 bytes",
                        (Executable) () -> BASE.withHostBudgetBytes(0)),
                Arguments.of("device 'gpu' is invalid; allowed: auto, simulated, cuda",
                        (Executable) () -> BASE.withDevice("gpu")),
                Arguments.of("max-age PT0S is invalid; allowed: a positive duration or off",
                        (Executable) () -> BASE.withMaxAge(Duration.ZERO)),
                Arguments.of("max-age PT-1S is invalid; allowed: a positive duration or off",
                        (Executable) () -> BASE.withMaxAge(Duration.ofSeconds(-1))),
                Arguments.of("layout is required",
                        (Executable) () -> new CacheConfig(null, 0, 1, 0, 1, "auto", null, 0, List.of(), null, false)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("invalidSettings")
    void constructor_withAnInvalidSetting_namesItAndTheAllowedValues(String message, Executable create) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, create);

        assertEquals(message, e.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"auto", "simulated", "cuda"})
    void constructor_acceptsEveryDeviceKind(String device) {
        assertEquals(device, BASE.withDevice(device).device());
    }

    @Test
    void constructor_withNoDevice_isAnInvalidSettingNotANullPointer() {
        // device.equals(...) on null throws NullPointerException instead of the one clear line (§7).
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> BASE.withDevice(null));

        assertTrue(e.getMessage().contains("device"), e.getMessage());
    }

    @Test
    void constructor_withANegativeDiskSize_isRejected() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> BASE.withDisk("/tmp/selene", -1));

        assertTrue(e.getMessage().contains("disk"), e.getMessage());
    }
}
