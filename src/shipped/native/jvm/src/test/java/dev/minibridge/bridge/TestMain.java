package dev.minibridge.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs the core's tests with nothing but the JDK (no JUnit jar: ADR 0040): the shared vectors
 * (VectorTests) and the core's own cases (CoreTests). Prints one line per test, writes a
 * JUnit-compatible XML report, exits 1 when a test failed and 2 on a usage error.
 *
 * <pre>java -cp out dev.minibridge.bridge.TestMain --schema generated/sdk/bridge.schema.json \
 *     --vectors openapi/bridge.vectors.json [--junit report.xml]</pre>
 */
public final class TestMain {
    private TestMain() {}

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) options.put(args[i], args[i + 1]);
        if (!options.containsKey("--schema") || !options.containsKey("--vectors") || args.length % 2 != 0) {
            System.err.println("usage: TestMain --schema <bridge.schema.json> --vectors <bridge.vectors.json> [--junit <report.xml>]");
            System.exit(2);
        }
        String schemaText = Files.readString(Path.of(options.get("--schema")), StandardCharsets.UTF_8);
        String vectorsText = Files.readString(Path.of(options.get("--vectors")), StandardCharsets.UTF_8);
        List<TestResult> results = new ArrayList<>();
        results.addAll(VectorTests.run(BridgeSchema.parse(schemaText), (JsonValue.Obj) Json.parse(vectorsText)));
        results.addAll(CoreTests.run(schemaText));
        int failed = 0;
        for (TestResult result : results) {
            System.out.println((result.passed() ? "PASS " : "FAIL ") + result.suite() + " " + result.name());
            for (String problem : result.problems()) System.out.println("     " + problem);
            if (!result.passed()) failed++;
        }
        System.out.println("SUMMARY tests=" + results.size() + " failed=" + failed);
        if (options.containsKey("--junit")) writeJunit(Path.of(options.get("--junit")), results);
        System.exit(failed == 0 ? 0 : 1);
    }

    private static void writeJunit(Path file, List<TestResult> results) throws IOException {
        Map<String, List<TestResult>> suites = new LinkedHashMap<>();
        for (TestResult result : results) suites.computeIfAbsent(result.suite(), key -> new ArrayList<>()).add(result);
        long failures = results.stream().filter(result -> !result.passed()).count();
        StringBuilder xml = new StringBuilder("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        xml.append("<testsuites name=\"minibridge bridge core (JVM)\" tests=\"").append(results.size()).append("\" failures=\"").append(failures).append("\">\n");
        for (Map.Entry<String, List<TestResult>> suite : suites.entrySet()) {
            long suiteFailures = suite.getValue().stream().filter(result -> !result.passed()).count();
            xml.append("  <testsuite name=\"").append(escape(suite.getKey())).append("\" tests=\"").append(suite.getValue().size())
                    .append("\" failures=\"").append(suiteFailures).append("\" errors=\"0\" skipped=\"0\">\n");
            for (TestResult result : suite.getValue()) {
                xml.append("    <testcase classname=\"dev.minibridge.bridge.").append(escape(suite.getKey())).append("\" name=\"").append(escape(result.name())).append('"');
                if (result.passed()) {
                    xml.append("/>\n");
                } else {
                    xml.append(">\n      <failure message=\"").append(escape(result.problems().get(0))).append("\">")
                            .append(escape(String.join("\n", result.problems()))).append("</failure>\n    </testcase>\n");
                }
            }
            xml.append("  </testsuite>\n");
        }
        xml.append("</testsuites>\n");
        Files.writeString(file, xml, StandardCharsets.UTF_8);
    }

    private static String escape(String text) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            switch (c) {
                case '&' -> out.append("&amp;");
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '"' -> out.append("&quot;");
                default -> out.append(c < 0x20 && c != '\n' && c != '\t' ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }
}
