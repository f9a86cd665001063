package dev.selene.engine.policy;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The count-min sketch: counts, saturates at 15, and halves after its sample. */
class FrequencySketchTest {

    @Test
    void counts_aKey_andSaturatesAtFifteen() {
        FrequencySketch sketch = new FrequencySketch();
        assertEquals(0, sketch.frequency(42));
        for (int i = 0; i < 3; i++) {
            sketch.increment(42);
        }
        assertEquals(3, sketch.frequency(42));
        for (int i = 0; i < 20; i++) {
            sketch.increment(42);
        }
        assertEquals(15, sketch.frequency(42));
        assertEquals(0, sketch.frequency(43), "another key");
    }

    @Test
    void afterItsSample_everyCountIsHalved() {
        FrequencySketch sketch = new FrequencySketch();
        for (int i = 0; i < 8; i++) {
            sketch.increment(7);
        }
        long distinct = (long) FrequencySketch.SAMPLE_FACTOR * FrequencySketch.WIDTH;
        for (long k = 1; k <= distinct; k++) {
            sketch.increment(1_000_000 + k);
        }
        assertTrue(sketch.frequency(7) <= 4, "halved at least once: " + sketch.frequency(7));
    }
}
