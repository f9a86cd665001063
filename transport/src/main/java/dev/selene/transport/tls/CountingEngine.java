package dev.selene.transport.tls;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSession;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.function.BiFunction;

/**
 * An {@link SSLEngine} of the cluster plane that reports its own handshake's failure as a refusal (counted, logged
 * once): the cluster transport drives the engine itself and offers no hook where a handshake fails. A server engine
 * reports every failure it raised itself (a peer with no certificate, another CA's, an expired one, plain text); a
 * client engine only what its own trust check refused (the rest is the server refusing it, the server's to count).
 */
final class CountingEngine extends SSLEngine {

    private final SSLEngine e;
    private final PoolTls tls;
    private boolean reported;

    CountingEngine(SSLEngine e, PoolTls tls) {
        super(e.getPeerHost(), e.getPeerPort());
        this.e = e;
        this.tls = tls;
    }

    private SSLException report(SSLException failure) {
        if (!reported) {
            reported = true;
            PoolTls.Reason reason = PoolTls.reasonOf(failure);
            boolean ours = !e.getUseClientMode() || PoolTls.hasRefusedCertificate(failure);
            if (reason != null && ours) {
                tls.refused(PoolTls.Plane.CLUSTER, reason, (e.getUseClientMode() ? "to " : "from ")
                        + PoolTls.peerOf(failure), PoolTls.rootLine(failure));
            }
        }
        return failure;
    }

    @Override
    public SSLEngineResult wrap(ByteBuffer[] srcs, int offset, int length, ByteBuffer dst) throws SSLException {
        try {
            return e.wrap(srcs, offset, length, dst);
        } catch (SSLException x) {
            throw report(x);
        }
    }

    @Override
    public SSLEngineResult unwrap(ByteBuffer src, ByteBuffer[] dsts, int offset, int length) throws SSLException {
        try {
            return e.unwrap(src, dsts, offset, length);
        } catch (SSLException x) {
            throw report(x);
        }
    }

    @Override
    public String getPeerHost() {
        return e.getPeerHost();
    }

    @Override
    public int getPeerPort() {
        return e.getPeerPort();
    }

    @Override
    public Runnable getDelegatedTask() {
        return e.getDelegatedTask();
    }

    @Override
    public void closeInbound() throws SSLException {
        e.closeInbound();
    }

    @Override
    public boolean isInboundDone() {
        return e.isInboundDone();
    }

    @Override
    public void closeOutbound() {
        e.closeOutbound();
    }

    @Override
    public boolean isOutboundDone() {
        return e.isOutboundDone();
    }

    @Override
    public String[] getSupportedCipherSuites() {
        return e.getSupportedCipherSuites();
    }

    @Override
    public String[] getEnabledCipherSuites() {
        return e.getEnabledCipherSuites();
    }

    @Override
    public void setEnabledCipherSuites(String[] suites) {
        e.setEnabledCipherSuites(suites);
    }

    @Override
    public String[] getSupportedProtocols() {
        return e.getSupportedProtocols();
    }

    @Override
    public String[] getEnabledProtocols() {
        return e.getEnabledProtocols();
    }

    @Override
    public void setEnabledProtocols(String[] protocols) {
        e.setEnabledProtocols(protocols);
    }

    @Override
    public SSLSession getSession() {
        return e.getSession();
    }

    @Override
    public SSLSession getHandshakeSession() {
        return e.getHandshakeSession();
    }

    @Override
    public void beginHandshake() throws SSLException {
        try {
            e.beginHandshake();
        } catch (SSLException x) {
            throw report(x);
        }
    }

    @Override
    public SSLEngineResult.HandshakeStatus getHandshakeStatus() {
        return e.getHandshakeStatus();
    }

    @Override
    public void setUseClientMode(boolean mode) {
        e.setUseClientMode(mode);
    }

    @Override
    public boolean getUseClientMode() {
        return e.getUseClientMode();
    }

    @Override
    public void setNeedClientAuth(boolean need) {
        e.setNeedClientAuth(need);
    }

    @Override
    public boolean getNeedClientAuth() {
        return e.getNeedClientAuth();
    }

    @Override
    public void setWantClientAuth(boolean want) {
        e.setWantClientAuth(want);
    }

    @Override
    public boolean getWantClientAuth() {
        return e.getWantClientAuth();
    }

    @Override
    public void setEnableSessionCreation(boolean flag) {
        e.setEnableSessionCreation(flag);
    }

    @Override
    public boolean getEnableSessionCreation() {
        return e.getEnableSessionCreation();
    }

    @Override
    public SSLParameters getSSLParameters() {
        return e.getSSLParameters();
    }

    @Override
    public void setSSLParameters(SSLParameters params) {
        e.setSSLParameters(params);
    }

    @Override
    public String getApplicationProtocol() {
        return e.getApplicationProtocol();
    }

    @Override
    public String getHandshakeApplicationProtocol() {
        return e.getHandshakeApplicationProtocol();
    }

    @Override
    public void setHandshakeApplicationProtocolSelector(BiFunction<SSLEngine, List<String>, String> selector) {
        e.setHandshakeApplicationProtocolSelector(selector);
    }

    @Override
    public BiFunction<SSLEngine, List<String>, String> getHandshakeApplicationProtocolSelector() {
        return e.getHandshakeApplicationProtocolSelector();
    }
}
