/**
 * The shared pool on Pekko Cluster: the manager nodes' record stores, the sharded directory that places records on
 * them and finds them, and the stream transfers that carry record images between hosts and managers.
 */
package dev.selene.actors.pool;
