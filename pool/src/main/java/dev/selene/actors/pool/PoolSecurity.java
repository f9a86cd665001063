package dev.selene.actors.pool;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import dev.selene.actors.api.SettingsException;
import dev.selene.transport.pool.DataPlaneTls;
import dev.selene.transport.pool.NamespaceAccess;
import dev.selene.transport.tls.PoolTls;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * How a pool node secures its two planes: TLS with mutual authentication on the cluster (Pekko Artery's
 * {@code tls-tcp}) and on the data plane (Netty), from the node's PEM files; or plain text, which a node accepts only
 * on one trusted host: by default only when its own address and every peer it is given are loopback
 * ({@code selene.pool.plain-text = loopback}), anywhere only when told ({@code on}), never with {@code off}.
 * A manager's namespace rules ({@code selene.manager.access}) need TLS: they go by the peers' certificates.
 *
 * @param files     the node's certificate, private key and the pool's CA; null: plain text
 * @param engine    the data plane's TLS engine (by default BoringSSL where it loads: it costs less CPU per GB than
 *                  the JDK's, see docs/pool.md)
 * @param plainText when plain text is accepted (without files)
 * @param access    namespace rules by certificate identity (empty: every member may touch every namespace)
 */
public record PoolSecurity(PoolTls.Files files, PoolTls.Engine engine, PlainText plainText,
                           Map<String, List<String>> access) {

    /** When a node without certificates may run plain text. */
    public enum PlainText {
        /** Only when the node and every peer it is given are on loopback (one host). */
        LOOPBACK,
        /** Anywhere: a pool on one trusted host or network, the operator's explicit choice. */
        ON,
        /** Never: a node without certificates does not start. */
        OFF
    }

    /** The settings' root. */
    static final String TLS = "selene.pool.tls";

    /** Plain text on loopback, no rules: what a node runs with when nothing is set. */
    public static final PoolSecurity DEFAULT = new PoolSecurity(null, PoolTls.openSslAvailable()
            ? PoolTls.Engine.OPENSSL : PoolTls.Engine.JDK, PlainText.LOOPBACK, Map.of());

    public PoolSecurity {
        Objects.requireNonNull(engine, "engine");
        Objects.requireNonNull(plainText, "plainText");
        access = Map.copyOf(access);
    }

    /** Whether the node's planes run TLS. */
    public boolean tls() {
        return files != null;
    }

    /**
     * The security {@code c} sets: {@code selene.pool.tls} (certificate, private-key, ca, engine),
     * {@code selene.pool.plain-text} and {@code selene.manager.access}; missing keys take the defaults.
     *
     * @throws IllegalArgumentException one line naming the setting that is wrong
     */
    public static PoolSecurity from(Config c) {
        String cert = string(c, TLS + ".certificate");
        String key = string(c, TLS + ".private-key");
        String ca = string(c, TLS + ".ca");
        PoolTls.Files files = null;
        if (!cert.isBlank() || !key.isBlank() || !ca.isBlank()) {
            for (String[] s : new String[][]{{"certificate", cert}, {"private-key", key}, {"ca", ca}}) {
                if (s[1].isBlank()) {
                    throw new SettingsException(TLS + "." + s[0] + " is not set; allowed: a PEM file "
                            + "(certificate, private-key and ca go together)");
                }
            }
            files = new PoolTls.Files(Path.of(cert), Path.of(key), Path.of(ca));
        }
        String engineName = c.hasPath(TLS + ".engine") ? c.getString(TLS + ".engine") : "auto";
        PoolTls.Engine engine = switch (engineName.toLowerCase(Locale.ROOT)) {
            case "auto" -> PoolTls.openSslAvailable() ? PoolTls.Engine.OPENSSL : PoolTls.Engine.JDK;
            case "jdk" -> PoolTls.Engine.JDK;
            case "openssl" -> PoolTls.Engine.OPENSSL;
            default -> throw new SettingsException(TLS + ".engine = '" + engineName
                    + "' is invalid; allowed: auto, jdk, openssl");
        };
        String plain = c.hasPath("selene.pool.plain-text") ? c.getValue("selene.pool.plain-text").unwrapped()
                .toString() : "loopback";
        PlainText plainText = switch (plain.toLowerCase(Locale.ROOT)) {
            case "loopback" -> PlainText.LOOPBACK;
            case "on", "true", "yes" -> PlainText.ON;
            case "off", "false", "no" -> PlainText.OFF;
            default -> throw new SettingsException("selene.pool.plain-text = '" + plain
                    + "' is invalid; allowed: loopback, on, off");
        };
        Map<String, List<String>> access = new LinkedHashMap<>();
        if (c.hasPath("selene.manager.access")) {
            Config rules = c.getConfig("selene.manager.access");
            for (var e : rules.root().entrySet()) {
                Object v = e.getValue().unwrapped();
                if (!(v instanceof List<?> l)) {
                    throw new SettingsException("selene.manager.access.\"" + e.getKey() + "\" = " + v
                            + " is invalid; allowed: a list of namespaces, e.g. [\"tenant-a\"] or [\"*\"]");
                }
                access.put(e.getKey(), l.stream().map(String::valueOf).toList());
            }
        }
        PoolSecurity s = new PoolSecurity(files, engine, plainText, access);
        try {
            s.namespaceAccess(); // checks the rules
        } catch (IllegalArgumentException e) {
            throw new SettingsException(e.getMessage());
        }
        if (!access.isEmpty() && files == null) {
            throw new SettingsException("selene.manager.access is set, but selene.pool.tls is not: namespace "
                    + "rules go by the peers' certificates; set the node's certificate files");
        }
        return s;
    }

    private static String string(Config c, String path) {
        return c.hasPath(path) ? c.getString(path) : "";
    }

    /**
     * Checks that this node may run as set: with TLS, that its files load; in plain text, that plain text is
     * allowed for {@code bindHost} and {@code peers} ({@code host:port} or {@code pekko://system@host:port}).
     *
     * @throws IllegalArgumentException one line saying what to set
     */
    public void requireUsable(String bindHost, List<String> peers) {
        if (tls()) {
            try {
                PoolTls.of(files);
            } catch (IllegalArgumentException e) {
                throw new SettingsException(e.getMessage());
            }
            if (engine == PoolTls.Engine.OPENSSL && !PoolTls.openSslAvailable()) {
                throw new SettingsException(TLS + ".engine = openssl, but netty-tcnative's BoringSSL does not "
                        + "load on this machine; allowed here: jdk");
            }
            return;
        }
        switch (plainText) {
            case ON -> {
            }
            case OFF -> throw new SettingsException(TLS + ".certificate is not set and selene.pool.plain-text "
                    + "= off: set the node's certificate files (" + TLS + ".certificate, private-key, ca)");
            case LOOPBACK -> {
                for (String h : hosts(bindHost, peers)) {
                    if (!loopback(h)) {
                        throw new SettingsException(TLS + ".certificate is not set and '" + h + "' is not a "
                                + "loopback address: a pool across hosts runs TLS; set the node's certificate files ("
                                + TLS + ".certificate, private-key, ca; scripts/pool-certs.sh makes them), or "
                                + "selene.pool.plain-text = on for a pool on one trusted network");
                    }
                }
            }
        }
    }

    private static List<String> hosts(String bindHost, List<String> peers) {
        java.util.ArrayList<String> out = new java.util.ArrayList<>();
        out.add(bindHost);
        for (String p : peers) {
            String a = p.startsWith("pekko://") ? p.substring(p.indexOf('@') + 1) : p;
            int colon = a.lastIndexOf(':');
            out.add(colon > 0 ? a.substring(0, colon) : a);
        }
        return out;
    }

    private static boolean loopback(String host) {
        if (host.equalsIgnoreCase("localhost")) {
            return true;
        }
        try {
            return InetAddress.getByName(host).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** The namespace rules. */
    public NamespaceAccess namespaceAccess() {
        return NamespaceAccess.of(access);
    }

    /** The data plane's TLS; null in plain text. */
    public DataPlaneTls dataPlane() {
        return tls() ? new DataPlaneTls(PoolTls.of(files), engine, namespaceAccess()) : null;
    }

    /** The node's certificates; null in plain text. */
    public PoolTls poolTls() {
        return tls() ? PoolTls.of(files) : null;
    }

    /**
     * The Pekko settings that carry this security into a node's actor system: the cluster's transport
     * ({@code tls-tcp} with this library's engine provider when TLS is on) and the settings themselves, which the
     * node's data plane reads from its system.
     */
    Config pekko() {
        return settings().withValue("pekko.remote.artery.transport", ConfigValueFactory.fromAnyRef(tls() ? "tls-tcp"
                : "tcp")).withFallback(tls() ? ConfigFactory.empty().withValue(
                        "pekko.remote.artery.ssl.ssl-engine-provider",
                        ConfigValueFactory.fromAnyRef(PoolSslEngineProvider.class.getName())) : ConfigFactory.empty());
    }

    /** These settings as the {@code selene.pool.tls}, {@code selene.pool.plain-text} and access keys. */
    public Config settings() {
        Config c = ConfigFactory.empty()
                .withValue("selene.pool.plain-text", ConfigValueFactory.fromAnyRef(plainText.name()
                        .toLowerCase(Locale.ROOT)))
                .withValue(TLS + ".engine", ConfigValueFactory.fromAnyRef(engine.label()))
                .withValue("selene.manager.access", ConfigValueFactory.fromMap(access));
        if (!tls()) {
            return c.withValue(TLS + ".certificate", ConfigValueFactory.fromAnyRef(""))
                    .withValue(TLS + ".private-key", ConfigValueFactory.fromAnyRef(""))
                    .withValue(TLS + ".ca", ConfigValueFactory.fromAnyRef(""));
        }
        return c.withValue(TLS + ".certificate", ConfigValueFactory.fromAnyRef(files.certificate().toString()))
                .withValue(TLS + ".private-key", ConfigValueFactory.fromAnyRef(files.privateKey().toString()))
                .withValue(TLS + ".ca", ConfigValueFactory.fromAnyRef(files.ca().toString()));
    }
}
