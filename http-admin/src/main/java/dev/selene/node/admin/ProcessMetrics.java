package dev.selene.node.admin;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.UnixOperatingSystemMXBean;

import java.io.IOException;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * The process's own metrics in Prometheus text, read from the JVM's MXBeans and {@code /proc/self} at each scrape:
 * the build, CPU time, memory, file descriptors, threads and garbage collections, under the names the Prometheus
 * client libraries use ({@code process_*}, {@code jvm_*}). They describe the process, so they carry no {@code node}
 * label. A figure the platform does not offer (no {@code /proc}, no Unix file descriptors) is left out.
 */
final class ProcessMetrics {

    private static final Path PROC_STATUS = Path.of("/proc/self/status");

    private ProcessMetrics() {
    }

    /** The text exposition of the process's metrics now. */
    static String scrape() {
        StringBuilder out = new StringBuilder(2048);
        family(out, "selene_build_info", "gauge", "Selene's version and the Java runtime it runs on; always 1");
        sample(out, "selene_build_info{version=\"" + BuildInfo.VERSION + "\",java_version=\""
                + escape(Runtime.version().toString()) + "\"}", 1);

        if (ManagementFactory.getOperatingSystemMXBean() instanceof OperatingSystemMXBean os) {
            long cpuNanos = os.getProcessCpuTime();
            if (cpuNanos >= 0) {
                family(out, "process_cpu_seconds_total", "counter", "User and system CPU time the process used");
                sample(out, "process_cpu_seconds_total", cpuNanos / 1e9);
            }
        }
        List<String> status = procStatus();
        long rss = kilobytes(status, "VmRSS:");
        if (rss >= 0) {
            family(out, "process_resident_memory_bytes", "gauge", "Resident memory of the process");
            sample(out, "process_resident_memory_bytes", rss);
        }
        long virtual = kilobytes(status, "VmSize:");
        if (virtual >= 0) {
            family(out, "process_virtual_memory_bytes", "gauge", "Virtual memory of the process");
            sample(out, "process_virtual_memory_bytes", virtual);
        }
        if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean unix) {
            family(out, "process_open_fds", "gauge", "File descriptors the process has open");
            sample(out, "process_open_fds", unix.getOpenFileDescriptorCount());
            family(out, "process_max_fds", "gauge", "File descriptors the process may open");
            sample(out, "process_max_fds", unix.getMaxFileDescriptorCount());
        }
        family(out, "process_start_time_seconds", "gauge", "Start of the process, in seconds since the Unix epoch");
        sample(out, "process_start_time_seconds", ManagementFactory.getRuntimeMXBean().getStartTime() / 1e3);

        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        MemoryUsage nonHeap = ManagementFactory.getMemoryMXBean().getNonHeapMemoryUsage();
        family(out, "jvm_memory_used_bytes", "gauge", "JVM memory in use, by area");
        sample(out, "jvm_memory_used_bytes{area=\"heap\"}", heap.getUsed());
        sample(out, "jvm_memory_used_bytes{area=\"nonheap\"}", nonHeap.getUsed());
        family(out, "jvm_memory_committed_bytes", "gauge", "JVM memory committed by the operating system, by area");
        sample(out, "jvm_memory_committed_bytes{area=\"heap\"}", heap.getCommitted());
        sample(out, "jvm_memory_committed_bytes{area=\"nonheap\"}", nonHeap.getCommitted());
        family(out, "jvm_memory_max_bytes", "gauge",
                "The most JVM memory the area may use, by area; -1 when unbounded");
        sample(out, "jvm_memory_max_bytes{area=\"heap\"}", heap.getMax());
        sample(out, "jvm_memory_max_bytes{area=\"nonheap\"}", nonHeap.getMax());

        var threads = ManagementFactory.getThreadMXBean();
        family(out, "jvm_threads_current", "gauge", "Live JVM threads, daemon threads included");
        sample(out, "jvm_threads_current", threads.getThreadCount());
        family(out, "jvm_threads_daemon", "gauge", "Live JVM daemon threads");
        sample(out, "jvm_threads_daemon", threads.getDaemonThreadCount());
        family(out, "jvm_threads_peak", "gauge", "The most live JVM threads at once since the JVM started");
        sample(out, "jvm_threads_peak", threads.getPeakThreadCount());

        family(out, "jvm_gc_collections_total", "counter", "Garbage collections, by collector");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sample(out, "jvm_gc_collections_total{gc=\"" + escape(gc.getName()) + "\"}",
                    Math.max(0, gc.getCollectionCount()));
        }
        family(out, "jvm_gc_collection_seconds_total", "counter", "Time spent in garbage collections, by collector");
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            sample(out, "jvm_gc_collection_seconds_total{gc=\"" + escape(gc.getName()) + "\"}",
                    Math.max(0, gc.getCollectionTime()) / 1e3);
        }
        return out.toString();
    }

    /** The lines of {@code /proc/self/status}; none where there is no {@code /proc}. */
    private static List<String> procStatus() {
        try {
            return Files.readAllLines(PROC_STATUS);
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
    }

    /** The {@code kB} field {@code field} of {@code /proc/self/status} in bytes, or -1 where there is none. */
    private static long kilobytes(List<String> status, String field) {
        for (String line : status) {
            if (line.startsWith(field)) {
                String[] p = line.substring(field.length()).strip().split("\\s+");
                try {
                    return Long.parseLong(p[0]) * 1024;
                } catch (NumberFormatException e) {
                    return -1;
                }
            }
        }
        return -1;
    }

    private static void family(StringBuilder out, String name, String type, String help) {
        out.append("# HELP ").append(name).append(' ').append(help).append('\n');
        out.append("# TYPE ").append(name).append(' ').append(type).append('\n');
    }

    private static void sample(StringBuilder out, String series, double value) {
        out.append(series).append(' ');
        if (value == Math.rint(value) && Math.abs(value) < 1e15) {
            out.append((long) value);
        } else {
            out.append(value);
        }
        out.append('\n');
    }

    /** {@code value} escaped for a label value: backslash, double quote and newline. */
    private static String escape(String value) {
        return value.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
    }
}
