package dev.selene.transport.gpu;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.List;
import java.util.Locale;
import java.util.Objects;

/** Chooses the device copier a node uses: the JCuda copier where CUDA works, the simulated device otherwise. */
public final class DeviceCopiers {

    /** Kinds accepted by {@link #select(String)}. */
    public static final List<String> KINDS = List.of("auto", "simulated", "cuda");

    private static final Logger log = LoggerFactory.getLogger(DeviceCopiers.class);

    private DeviceCopiers() {
    }

    /**
     * The copier of kind {@code kind}, logging one line that says which and why.
     * <ul>
     *   <li>{@code simulated}: a {@link SimulatedDevice}.</li>
     *   <li>{@code cuda}: the JCuda copier; an {@link IllegalStateException} carrying {@link CudaProbe}'s cause
     *       when CUDA is unavailable. The JCuda copier is not built yet, so where CUDA works this throws
     *       {@link UnsupportedOperationException}.</li>
     *   <li>{@code auto}: {@code cuda} when {@link CudaProbe#unavailabilityCause()} is {@code null}, else
     *       {@code simulated}. Until the JCuda copier exists, a machine with CUDA also gets {@code simulated},
     *       with a warning, rather than failing to start.</li>
     * </ul>
     */
    public static DeviceCopier select(String kind) {
        Objects.requireNonNull(kind, "kind");
        return switch (kind.strip().toLowerCase(Locale.ROOT)) {
            case "simulated" -> {
                log.info("device copier: simulated (requested)");
                yield SimulatedDevice.create();
            }
            case "cuda" -> {
                String cause = CudaProbe.unavailabilityCause();
                if (cause != null) {
                    throw new IllegalStateException("device copier 'cuda' was requested but CUDA is unavailable: "
                            + cause);
                }
                throw new UnsupportedOperationException("JCuda copier not built yet");
            }
            case "auto" -> {
                String cause = CudaProbe.unavailabilityCause();
                if (cause != null) {
                    log.info("device copier: simulated, because CUDA is unavailable: {}", cause);
                } else {
                    log.warn("device copier: simulated, because CUDA is available but the JCuda copier is not built yet");
                }
                yield SimulatedDevice.create();
            }
            default -> throw new IllegalArgumentException(
                    "device copier '" + kind + "' is unknown; allowed: " + String.join(", ", KINDS));
        };
    }
}
