package dev.selene.node.admin;

/** The version of this build, as {@code selene --version} and the metric {@code selene_build_info} show it. */
public final class BuildInfo {

    /** Selene's version. */
    public static final String VERSION = "0.1.0";

    private BuildInfo() {
    }
}
