package dev.selene.actors.api;

import dev.selene.engine.config.CacheConfig;
import dev.selene.transport.gpu.DeviceCopier;
import dev.selene.transport.gpu.DeviceCopiers;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Extension;
import org.apache.pekko.actor.typed.ExtensionId;

/**
 * The cache node of an application's actor system, configured by the {@code selene} section of the system's own
 * configuration ({@code application.conf}): {@code Selene.get(system).cache()}. The node starts on first use and
 * stops with the system; its device copier (CUDA when present, else the simulated device) is closed then too.
 */
public final class Selene implements Extension {

    private static final ExtensionId<Selene> ID = new ExtensionId<>() {
        @Override
        public Selene createExtension(ActorSystem<?> system) {
            return new Selene(system);
        }
    };

    private final SeleneCache cache;

    private Selene(ActorSystem<?> system) {
        CacheConfig config = CacheSettings.fromConfig(system.settings().config());
        DeviceCopier copier = DeviceCopiers.select(config.device());
        SeleneCache started;
        try {
            started = SeleneCache.startIn(system, config, copier, "selene");
        } catch (RuntimeException e) {
            copier.close();
            throw e;
        }
        this.cache = started;
        system.getWhenTerminated().whenComplete((done, failure) -> copier.close());
    }

    /** The node of {@code system}, started on first use. */
    public static Selene get(ActorSystem<?> system) {
        return ID.apply(system);
    }

    /** The node's Java API. */
    public SeleneCache cache() {
        return cache;
    }
}
