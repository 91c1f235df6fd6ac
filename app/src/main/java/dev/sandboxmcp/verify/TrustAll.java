package dev.sandboxmcp.verify;

import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManager;
import javax.net.ssl.X509TrustManager;

/** A TLS context that accepts any certificate: for {@code verify --insecure} and tests, against test proxies only. */
public final class TrustAll {

    private TrustAll() {
    }

    public static SSLContext context() {
        TrustManager acceptAll = new X509TrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return new X509Certificate[0];
            }
        };
        try {
            SSLContext context = SSLContext.getInstance("TLS");
            context.init(null, new TrustManager[] {acceptAll}, new SecureRandom());
            // The JDK client also checks the host name; a test proxy's default certificate names no host.
            System.setProperty("jdk.internal.httpclient.disableHostnameVerification", "true");
            return context;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("TLS is unavailable", e);
        }
    }
}
