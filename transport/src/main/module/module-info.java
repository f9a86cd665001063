/**
 * Moving record bytes: the device copiers (the API's {@code DeviceCopier}, the simulated device and the CUDA one),
 * host memory and the disk tier's record files. The pool's data plane and its TLS (packages {@code pool} and
 * {@code tls}) are used by the pool's module, which runs on the class path, and need Netty only there.
 */
module dev.selene.transport {
    requires transitive dev.selene.engine;
    requires java.naming;
    requires jcuda;
    requires org.slf4j;
    requires static io.netty.buffer;
    requires static io.netty.common;
    requires static io.netty.handler;
    requires static io.netty.transport;
    requires static io.netty.transport.classes.epoll;

    exports dev.selene.transport.gpu;
    exports dev.selene.transport.disk;
    exports dev.selene.transport.host to dev.selene.actors;
}
