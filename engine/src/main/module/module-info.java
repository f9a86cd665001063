/**
 * Selene's domain cores: record keys, layouts and settings (the API's value types), and the catalog, index, policies,
 * codec and slot accounting the node's actors run on (for the node's own modules only).
 */
module dev.selene.engine {
    exports dev.selene.engine.config;
    exports dev.selene.engine.key;
    exports dev.selene.engine.layout;
    exports dev.selene.engine.catalog to dev.selene.actors;
    exports dev.selene.engine.codec to dev.selene.transport, dev.selene.actors;
    exports dev.selene.engine.cost to dev.selene.actors;
    exports dev.selene.engine.expiry to dev.selene.actors;
    exports dev.selene.engine.index to dev.selene.actors;
    exports dev.selene.engine.intake to dev.selene.actors;
    exports dev.selene.engine.policy to dev.selene.actors;
    exports dev.selene.engine.slots to dev.selene.transport, dev.selene.actors;
}
