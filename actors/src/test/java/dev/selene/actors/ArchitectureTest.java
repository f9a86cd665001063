package dev.selene.actors;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import dev.selene.actors.cache.HostCache;
import org.junit.jupiter.api.Test;
import com.tngtech.archunit.lang.EvaluationResult;

import java.net.URISyntaxException;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * The core's packages form no cycle: the value types sit below everything, metrics and traces above them, the store
 * protocol above those, the node's actors above that, and the facade at the top. Checked on the compiled main
 * classes (a cycle through a javadoc link is none).
 */
class ArchitectureTest {

    @Test
    void theCoresPackages_areFreeOfCycles() throws URISyntaxException {
        // the module's main classes only (its class folder or jar), not its tests
        Path main = Path.of(HostCache.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        JavaClasses core = new ClassFileImporter().importPath(main);
        EvaluationResult result = slices().matching("dev.selene.actors.(*)..").should().beFreeOfCycles()
                .evaluate(core);
        assertTrue(core.size() > 0, "classes were read");
        assertFalse(result.hasViolation(), result.getFailureReport().toString());
    }
}
