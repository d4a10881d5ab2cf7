package dev.minibridge.bridge;

import java.util.List;

/** One test's outcome: its suite and name, and the problems found (none when it passed). */
record TestResult(String suite, String name, List<String> problems) {
    boolean passed() {
        return problems.isEmpty();
    }
}
