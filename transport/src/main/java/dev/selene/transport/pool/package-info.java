/** A record's file image sent between nodes in chunks, for the pool tier. */
package dev.selene.transport.pool;
