package dev.selene.node.admin;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Prometheus text exposition parsed into its HELP and TYPE lines and its samples. */
record Scrape(Map<String, String> help, Map<String, String> types, List<Sample> samples) {

    /** One sample line: the series name, its labels and its value. */
    record Sample(String name, Map<String, String> labels, double value) {
    }

    private static final Pattern SAMPLE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})? (\\S+)");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"([^\"]*)\"");

    static Scrape parse(String text) {
        Map<String, String> help = new HashMap<>();
        Map<String, String> types = new HashMap<>();
        List<Sample> samples = new ArrayList<>();
        for (String line : text.lines().toList()) {
            if (line.startsWith("# HELP ")) {
                String[] p = line.substring(7).split(" ", 2);
                help.put(p[0], p.length > 1 ? p[1] : "");
            } else if (line.startsWith("# TYPE ")) {
                String[] p = line.substring(7).split(" ", 2);
                types.put(p[0], p[1]);
            } else if (!line.isBlank() && !line.startsWith("#")) {
                Matcher m = SAMPLE.matcher(line);
                if (!m.matches()) {
                    throw new AssertionError("not a sample line: " + line);
                }
                Map<String, String> labels = new LinkedHashMap<>();
                if (m.group(2) != null) {
                    Matcher l = LABEL.matcher(m.group(2));
                    while (l.find()) {
                        labels.put(l.group(1), l.group(2));
                    }
                }
                samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
            }
        }
        return new Scrape(help, types, samples);
    }

    /** The samples of series {@code name} whose labels include {@code labels}. */
    List<Sample> series(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name)
                && s.labels().entrySet().containsAll(labels.entrySet())).toList();
    }

    /** The summed value of series {@code name} with {@code labels} (over nodes), or -1 when there is none. */
    double value(String name, Map<String, String> labels) {
        List<Sample> s = series(name, labels);
        return s.isEmpty() ? -1 : s.stream().mapToDouble(Sample::value).sum();
    }
}
