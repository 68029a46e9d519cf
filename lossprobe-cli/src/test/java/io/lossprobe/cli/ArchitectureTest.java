package io.lossprobe.cli;

import static com.tngtech.archunit.base.DescribedPredicate.not;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import java.util.regex.Pattern;

/**
 * The rules of docs/architecture.md ("Rules the graph keeps") over every module's main classes: this module's
 * tests have them all on the class path. Test classes (test-classes directories and probe-core's test jar) are
 * left out; their scope is looser on purpose.
 */
@AnalyzeClasses(packages = "io.lossprobe",
        importOptions = {ImportOption.DoNotIncludeTests.class, ArchitectureTest.NoTestJars.class})
class ArchitectureTest {
    /** Leaves out a test jar (probe-core's {@code -tests.jar}), which {@code DoNotIncludeTests} does not know. */
    static final class NoTestJars implements ImportOption {
        private static final Pattern TEST_JAR = Pattern.compile(".*-tests\\.jar!/.*");

        @Override
        public boolean includes(Location location) {
            return !location.matches(TEST_JAR);
        }
    }

    private static final String LOSSPROBE = "io.lossprobe..";
    private static final String CORE = "io.lossprobe.core..";

    @ArchTest
    static final ArchRule transportsDoNotImportEachOther = slices()
            .matching("io.lossprobe.(udp|tcp|aeron)..")
            .should().notDependOnEachOther()
            .because("a transport only moves bytes; what transports share lives in probe-core or netty-support");

    @ArchTest
    static final ArchRule transportsImportNeitherControlNorAnalysis = noClasses()
            .that().resideInAnyPackage("io.lossprobe.udp..", "io.lossprobe.tcp..", "io.lossprobe.aeron..",
                    "io.lossprobe.netty..")
            .should().dependOnClassesThat()
            .resideInAnyPackage("io.lossprobe.control..", "io.lossprobe.analysis..", "io.lossprobe.cli..");

    @ArchTest
    static final ArchRule transportsImplementTheSpiAndReachNoHigher = noClasses()
            .that().resideInAnyPackage("io.lossprobe.udp..", "io.lossprobe.tcp..", "io.lossprobe.aeron..",
                    "io.lossprobe.netty..")
            .should().dependOnClassesThat()
            .resideInAnyPackage("io.lossprobe.core.engine..", "io.lossprobe.core.pacing..",
                    "io.lossprobe.core.search..")
            .because("the engine drives a transport through the SPI (core.transport); a transport only moves bytes");

    @ArchTest
    static final ArchRule nettySupportImportsOnlyProbeCore = onlyLossprobeDependenciesIn(
            "io.lossprobe.netty..", "io.lossprobe.netty..", CORE);

    @ArchTest
    static final ArchRule cliFindsTransportsThroughServiceLoader = noClasses()
            .that().resideInAPackage("io.lossprobe.cli..")
            .should().dependOnClassesThat()
            .resideInAnyPackage("io.lossprobe.udp..", "io.lossprobe.tcp..", "io.lossprobe.aeron..",
                    "io.lossprobe.netty..")
            .because("the CLI finds transports with ServiceLoader (core.transport.Transports.available())");

    @ArchTest
    static final ArchRule probeCoreImportsNoOtherModule = onlyLossprobeDependenciesIn(CORE, CORE);

    @ArchTest
    static final ArchRule controlImportsOnlyProbeCore = onlyLossprobeDependenciesIn(
            "io.lossprobe.control..", "io.lossprobe.control..", CORE);

    @ArchTest
    static final ArchRule analysisImportsOnlyProbeCore = onlyLossprobeDependenciesIn(
            "io.lossprobe.analysis..", "io.lossprobe.analysis..", CORE);

    @ArchTest
    static final ArchRule wireImportsNothing = onlyLossprobeDependenciesIn(
            "io.lossprobe.core.wire..", "io.lossprobe.core.wire..");

    @ArchTest
    static final ArchRule planImportsOnlyWire = onlyLossprobeDependenciesIn(
            "io.lossprobe.core.plan..", "io.lossprobe.core.plan..", "io.lossprobe.core.wire..");

    @ArchTest
    static final ArchRule lowerCoreImportsNeitherPacingNorEngineNorSearch = noClasses()
            .that().resideInAnyPackage("io.lossprobe.core.transport..", "io.lossprobe.core.wire..",
                    "io.lossprobe.core.plan..", "io.lossprobe.core.accounting..", "io.lossprobe.core.result..")
            .should().dependOnClassesThat()
            .resideInAnyPackage("io.lossprobe.core.pacing..", "io.lossprobe.core.engine..",
                    "io.lossprobe.core.search..", "io.lossprobe.control..");

    @ArchTest
    static final ArchRule engineSitsAboveEverythingInCore = noClasses()
            .that().resideInAPackage(CORE).and().resideOutsideOfPackage("io.lossprobe.core.engine..")
            .should().dependOnClassesThat().resideInAPackage("io.lossprobe.core.engine..");

    /** Classes in {@code packages} depend on no lossprobe class outside {@code allowed}. */
    private static ArchRule onlyLossprobeDependenciesIn(String packages, String... allowed) {
        return classes().that().resideInAPackage(packages)
                .should().onlyDependOnClassesThat(not(resideInAPackage(LOSSPROBE)).or(resideInAnyPackage(allowed)));
    }
}
