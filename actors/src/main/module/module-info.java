/**
 * The cache node: its actors and its Java API. An application uses {@code api} (the facade, {@code SeleneCache}) and
 * {@code value} (what it answers); {@code cache} holds {@code HostCache}, to spawn under its own guardian; {@code
 * metrics} the node's counters and the interface a metrics library plugs into; {@code trace} the records' traces.
 */
module dev.selene.actors {
    requires transitive dev.selene.engine;
    requires transitive dev.selene.transport;
    requires transitive pekko.actor;
    requires transitive pekko.actor.typed;
    requires transitive scala.library;
    requires transitive typesafe.config;
    requires transitive org.slf4j;
    // Pekko, an automatic module, uses sun.misc.Unsafe and cannot say so itself: without this an application module
    // would have to add the module by hand (--add-modules jdk.unsupported).
    requires jdk.unsupported;

    exports dev.selene.actors.api;
    exports dev.selene.actors.value;
    exports dev.selene.actors.cache;
    exports dev.selene.actors.metrics;
    exports dev.selene.actors.trace;

    // The node's mailbox, which Pekko instantiates by the class name its settings give.
    opens dev.selene.actors.census to pekko.actor;

    uses dev.selene.actors.metrics.MetricsBackend;
    uses dev.selene.actors.store.RemoteTier;
}
