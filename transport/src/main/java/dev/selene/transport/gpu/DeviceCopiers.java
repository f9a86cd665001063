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
     *   <li>{@code cuda}: a {@link JCudaDeviceCopier} on device 0 in the {@link CopyMode} that the system property
     *       {@value CopyMode#PROPERTY} names (default {@code kernel-direct}); an {@link IllegalStateException}
     *       carrying {@link CudaProbe}'s cause when CUDA is unavailable.</li>
     *   <li>{@code auto}: {@code cuda} when {@link CudaProbe#unavailabilityCause()} is {@code null}, else
     *       {@code simulated}. Where CUDA is present but the copier cannot start, the error propagates: snapshots
     *       then live in real device memory, which a simulated device cannot read.</li>
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
                JCudaDeviceCopier copier = JCudaDeviceCopier.create();
                log.info("device copier: cuda (requested), {} copies, on {}", copier.mode().label(), copier.device());
                yield copier;
            }
            case "auto" -> {
                String cause = CudaProbe.unavailabilityCause();
                if (cause != null) {
                    log.info("device copier: simulated, because CUDA is unavailable: {}", cause);
                    yield SimulatedDevice.create();
                }
                JCudaDeviceCopier copier = JCudaDeviceCopier.create();
                log.info("device copier: cuda, because CUDA is available: {} copies, on {}", copier.mode().label(),
                        copier.device());
                yield copier;
            }
            default -> throw new IllegalArgumentException(
                    "device copier '" + kind + "' is unknown; allowed: " + String.join(", ", KINDS));
        };
    }
}
