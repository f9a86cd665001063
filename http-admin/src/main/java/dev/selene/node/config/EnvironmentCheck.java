package dev.selene.node.config;

import dev.selene.actors.api.SettingsException;
import dev.selene.engine.config.ByteSize;
import dev.selene.node.Failures;
import dev.selene.transport.disk.DirectoryInUseException;
import dev.selene.transport.disk.DirectoryLock;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;

/**
 * Checks what a node's or a pool manager's settings name on this machine before it starts anything (no memory mapped,
 * no actor system, no metrics): that this machine's memory holds its host slots or its store, the disk directory, the
 * admin server's address and port, a pool host's address, a manager's cluster and data ports. A problem
 * is a {@link SettingsException} whose one line names the setting, the value, what is wrong and what is allowed.
 *
 * <p>The checks are probes (a file created and deleted, a socket bound and closed, the directory's lock taken and
 * released): the node takes the real hold moments later, and a loser of that race still fails at start, later.
 */
public final class EnvironmentCheck {

    static final String WARM = SettingsLoader.ROOT + ".warm";
    static final String DISK_DIR = SettingsLoader.ROOT + ".disk.dir";
    static final String ADMIN_BIND = SettingsLoader.ROOT + ".admin.bind";
    static final String ADMIN_PORT = SettingsLoader.ROOT + ".admin.port";
    static final String POOL_BIND = SettingsLoader.ROOT + ".pool.bind";
    static final String POOL_PORT = SettingsLoader.ROOT + ".pool.port";
    static final String STORE_SIZE = SettingsLoader.ROOT + ".manager.store-size";
    static final String MANAGER_BIND = SettingsLoader.ROOT + ".manager.bind";
    static final String MANAGER_PORT = SettingsLoader.ROOT + ".manager.port";
    static final String MANAGER_DATA_PORT = SettingsLoader.ROOT + ".manager.data-port";
    static final String MANAGER_ADMIN_PORT = SettingsLoader.ROOT + ".manager.admin-port";

    private static final String WRITABLE_DIRECTORY = "a writable directory";
    private static final String PROBE_PREFIX = ".selene-write-probe-";

    private EnvironmentCheck() {
    }

    /**
     * Checks the disk directory (created when the settings allow), the admin address and port, and the pool host's
     * cluster address and port.
     */
    public static void check(NodeSettings settings) {
        String memory = MachineMemory.problem(settings.cache());
        if (memory != null) {
            throw new SettingsException(WARM + " = '" + ByteSize.format(settings.cache().warmBytes())
                    + "' is invalid: " + memory);
        }
        admin(settings.admin());
        if (settings.cache().poolEnabled()) {
            String allowed = "this host's address or name in the pool's cluster, e.g. 10.0.0.5";
            poolAddress(POOL_BIND, settings.poolHost().bind());
            InetAddress address = resolve(POOL_BIND, settings.poolHost().bind(), allowed);
            bindable(POOL_BIND, settings.poolHost().bind(), address, allowed);
            freePort(POOL_PORT, address, settings.poolHost().port());
        }
        // Last: a disk directory this check creates (selene.disk.create) is not left behind by a refusal above.
        if (settings.cache().diskDir() != null) {
            diskDirectory(settings.cache().diskDir(), settings.createDiskDir());
        }
    }

    /**
     * Checks a pool manager's settings: its store fits this machine's memory, its admin address and port, and its
     * cluster and data ports (where not 0) are free on its cluster address.
     */
    public static void checkManager(NodeSettings settings) {
        ManagerSettings m = settings.manager();
        String memory = MachineMemory.storeProblem(m.storeBytes());
        if (memory != null) {
            throw new SettingsException(STORE_SIZE + " = '" + ByteSize.format(m.storeBytes()) + "' is invalid: "
                    + memory);
        }
        admin(settings.admin().bind(), MANAGER_ADMIN_PORT, m.adminPort());
        String allowed = "an IP address or host name of this machine that the other pool members reach, e.g. "
                + "10.0.0.5";
        poolAddress(MANAGER_BIND, m.bind());
        InetAddress address = resolve(MANAGER_BIND, m.bind(), allowed);
        bindable(MANAGER_BIND, m.bind(), address, allowed);
        freePort(MANAGER_PORT, address, m.port());
        freePort(MANAGER_DATA_PORT, address, m.dataPort());
        if (m.dataPort() != 0 && (m.dataPort() == m.port() || m.dataPort() == m.adminPort())) {
            throw new SettingsException(MANAGER_DATA_PORT + " = '" + m.dataPort() + "' is invalid: "
                    + (m.dataPort() == m.port() ? MANAGER_PORT : MANAGER_ADMIN_PORT) + " is the same port; allowed: "
                    + "a port of its own, or 0 for any free port");
        }
        if (m.port() != 0 && m.port() == m.adminPort()) {
            throw new SettingsException(MANAGER_ADMIN_PORT + " = '" + m.adminPort() + "' is invalid: " + MANAGER_PORT
                    + " is the same port; allowed: a port of its own, or 0 for any free port");
        }
    }

    /**
     * The disk tier's directory exists (or is created, with {@code create}), is a directory, takes a new file and is
     * held by no other node.
     */
    static void diskDirectory(String setting, boolean create) {
        diskDirectory(DISK_DIR, setting, create, "an existing writable directory, or " + SettingsLoader.ROOT
                + ".disk.create = true (--create-disk-dir) to create it");
    }

    /**
     * As {@link #diskDirectory(String, boolean)} for a directory that {@code name} (a setting or an option) names;
     * {@code allowedWhenMissing} says what is allowed when it does not exist and {@code create} is false.
     */
    public static void diskDirectory(String name, String setting, boolean create, String allowedWhenMissing) {
        Path dir;
        try {
            dir = Path.of(setting);
        } catch (InvalidPathException e) {
            throw SettingsException.invalid(name, setting, "a directory path");
        }
        if (!Files.exists(dir)) {
            if (!create) {
                throw invalidDisk(name, setting, "no such directory", allowedWhenMissing);
            }
            try {
                Files.createDirectories(dir);
            } catch (IOException e) {
                throw invalidDisk(name, setting, "cannot create it (" + Failures.io(e) + ")", WRITABLE_DIRECTORY);
            }
        }
        if (!Files.isDirectory(dir)) {
            throw invalidDisk(name, setting, "not a directory", WRITABLE_DIRECTORY);
        }
        if (!Files.isWritable(dir)) {
            throw invalidDisk(name, setting, "not writable", WRITABLE_DIRECTORY);
        }
        Path probe = dir.resolve(PROBE_PREFIX + ProcessHandle.current().pid());
        try {
            Files.deleteIfExists(probe);
            Files.createFile(probe);
            Files.delete(probe);
        } catch (IOException e) {
            throw invalidDisk(name, setting, "cannot write a file in it (" + Failures.io(e) + ")",
                    WRITABLE_DIRECTORY);
        }
        try {
            DirectoryLock.acquire(dir).close();
        } catch (DirectoryInUseException e) {
            String pid = e.holderPid().isPresent() ? Long.toString(e.holderPid().getAsLong()) : "unknown";
            throw invalidDisk(name, setting, "already used by another Selene node (pid " + pid + ")",
                    "a directory no running node uses");
        } catch (IOException e) {
            throw invalidDisk(name, setting, "cannot lock it (" + Failures.io(e) + ")", WRITABLE_DIRECTORY);
        }
    }

    /**
     * Checks only the admin address and port of {@code settings}: for a command that builds its node's other settings
     * itself ({@code soak}), before it prints or creates anything.
     */
    public static void checkAdmin(NodeSettings settings) {
        admin(settings.admin());
    }

    /** The node's admin address resolves to an address of this machine, and its port (unless 0) is free there. */
    static void admin(AdminSettings a) {
        admin(a.bind(), ADMIN_PORT, a.port());
    }

    /**
     * The admin address {@code bind} resolves to an address of this machine, and its port (setting {@code portSetting},
     * unless 0) is free there.
     */
    static void admin(String bind, String portSetting, int port) {
        String allowedAddress = "an IP address or host name of this machine, e.g. 127.0.0.1";
        InetAddress address = resolve(ADMIN_BIND, bind, allowedAddress);
        bindable(ADMIN_BIND, bind, address, allowedAddress);
        freePort(portSetting, address, port);
    }

    /**
     * A pool member's address {@code bind} (setting {@code setting}) is no IPv6 literal: the pool's members name each
     * other as {@code host:port} (seeds, managers), which has no room for one.
     */
    private static void poolAddress(String setting, String bind) {
        if (bind.indexOf(':') >= 0) {
            throw new SettingsException(setting + " = '" + bind + "' is invalid: the pool's members name each other "
                    + "as host:port, which cannot hold an IPv6 address; allowed: an IPv4 address or a host name");
        }
    }

    /** {@code address}, which setting {@code setting} = {@code bind} resolved to, can be bound on this machine. */
    private static void bindable(String setting, String bind, InetAddress address, String allowed) {
        IOException failure = bind(address, 0);
        if (failure != null) {
            throw new SettingsException(setting + " = '" + bind + "' is invalid: it cannot be bound ("
                    + Failures.io(failure) + "); allowed: " + allowed);
        }
    }

    /** Port {@code port} (setting {@code setting}) is free on {@code address}; 0 (any free port) always is. */
    private static void freePort(String setting, InetAddress address, int port) {
        if (port == 0) {
            return;
        }
        IOException portFailure = bind(address, port);
        if (portFailure != null) {
            throw new SettingsException(setting + " = '" + port + "' is invalid: it cannot be bound on "
                    + address.getHostAddress() + " (" + Failures.io(portFailure) + "); allowed: a free port, or 0 for "
                    + "any free port");
        }
    }

    private static InetAddress resolve(String setting, String host, String allowed) {
        try {
            return InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new SettingsException(setting + " = '" + host + "' is invalid: no such host; allowed: " + allowed);
        } catch (SecurityException e) {
            throw new SettingsException(setting + " = '" + host + "' is invalid: it cannot be resolved ("
                    + e.getMessage() + "); allowed: " + allowed);
        }
    }

    /** Binds and closes a listening socket; the failure, or null. */
    private static IOException bind(InetAddress address, int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(address, port), 1);
            return null;
        } catch (IOException e) {
            return e;
        }
    }

    private static SettingsException invalidDisk(String name, String dir, String problem, String allowed) {
        return new SettingsException(name + " = '" + dir + "' is invalid: " + problem + "; allowed: " + allowed);
    }
}
