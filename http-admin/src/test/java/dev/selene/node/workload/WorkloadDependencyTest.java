package dev.selene.node.workload;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import com.tngtech.archunit.lang.EvaluationResult;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * Which way the dependencies between the node's packages go: the served node drives the burst workload into itself
 * and takes nothing of the benchmark harness; the harness uses the workload, never the other way round. Checked on
 * the compiled classes, so a fully qualified name counts as much as an import.
 */
class WorkloadDependencyTest {

    private static JavaClasses node;

    @BeforeAll
    static void importTheNode() {
        node = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.selene.node");
    }

    @Test
    void theServedNode_usesNothingOfTheBenchmarkHarness() {
        EvaluationResult result = noClasses().that().resideInAPackage("dev.selene.node.serve..")
                .should().dependOnClassesThat().resideInAPackage("dev.selene.node.burst..")
                .because("serve --workload runs the workload package; the burst harness is a benchmark's")
                .evaluate(node);
        assertTrue(node.size() > 0, "classes were read");
        assertFalse(result.hasViolation(), result.getFailureReport().toString());
    }

    @Test
    void theWorkload_usesNeitherTheHarnessNorTheCommands() {
        EvaluationResult result = noClasses().that().resideInAPackage("dev.selene.node.workload..")
                .should().dependOnClassesThat().resideInAnyPackage("dev.selene.node.burst..",
                        "dev.selene.node.serve..", "dev.selene.node.cli..")
                .because("the harness and the commands use the workload, never the other way round")
                .evaluate(node);
        assertTrue(node.size() > 0, "classes were read");
        assertFalse(result.hasViolation(), result.getFailureReport().toString());
    }
}
