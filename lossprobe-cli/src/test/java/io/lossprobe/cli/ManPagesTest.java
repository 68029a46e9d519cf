package io.lossprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The man pages and the completion script as {@link DistributionFiles} writes them at build time: lint-clean under
 * the real {@code mandoc -Tlint} (skipped without mandoc; CI installs it), every page with a date and the sections
 * a user looks for, and completion that offers the words of every enumerated option and files for file options,
 * run in a real bash.
 */
class ManPagesTest {
    @TempDir
    static Path out;

    @BeforeAll
    static void write() throws IOException {
        DistributionFiles.main(new String[] {out.toString(), "9.9.9", "2026-01-02T00:00:00Z"});
    }

    private static List<Path> pages() throws IOException {
        try (Stream<Path> files = Files.list(out.resolve("share/man/man1"))) {
            return files.sorted().toList();
        }
    }

    record Exec(int exit, String output) {
    }

    private static Exec exec(List<String> cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Exec(p.exitValue(), output);
    }

    @Test
    void everyPageHasADateTheSectionsAndNoLineOver80Bytes() throws IOException {
        List<Path> pages = pages();
        assertThat(pages).hasSize(10);
        for (Path page : pages) {
            String text = Files.readString(page);
            assertThat(text).as(page.toString()).containsPattern("(?m)^\\.TH \"[A-Z-]+\" \"1\" \"2026-01-02\" ")
                .contains(".SH EXIT STATUS\n", ".SH ENVIRONMENT\n", ".SH FILES\n", ".SH EXAMPLES\n")
                .doesNotContain(".SH NOTES\n.PP", ".SH DESCRIPTION\n.PP");
            for (String line : text.split("\n")) {
                assertThat(line.getBytes(StandardCharsets.UTF_8).length).as(page + ": " + line)
                    .isLessThanOrEqualTo(ManPage.MAX_LINE);
            }
        }
        String serve = Files.readString(out.resolve("share/man/man1/lossprobe-serve.1"));
        assertThat(serve).contains("LOSSPROBE_SECRET", "/etc/lossprobe/secret", "lossprobe\\-serve.service",
            ".TP\n\\fB2\\fR\nbad usage\n");
        assertThat(Files.readString(out.resolve("share/man/man1/lossprobe-report.1")))
            .doesNotContain("LOSSPROBE_SECRET").contains("/etc/lossprobe/policy.json");
    }

    @Test
    void mandocLintsEveryPageClean() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/mandoc")), "no mandoc (apt-get install mandoc)");
        List<String> cmd = new ArrayList<>(List.of("/usr/bin/mandoc", "-Tlint", "-W", "all"));
        pages().forEach(p -> cmd.add(p.toString()));
        Exec lint = exec(cmd);
        assertThat(lint.output()).isEmpty();
        assertThat(lint.exit()).isZero();
    }

    /**
     * The zsh script in a real zsh (skipped without zsh; CI installs it): sourced after compinit it registers
     * itself through zsh's bashcompinit, with nothing on stderr, and completes as in bash.
     */
    @Test
    void theZshScriptRegistersAndCompletesInARealZsh() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/zsh")), "no zsh (apt-get install zsh)");
        Path script = out.resolve("share/zsh/lossprobe.zsh");
        Exec r = exec(List.of("/usr/bin/zsh", "-f", "-c", "autoload -Uz compinit && compinit -u -d '" + out
            + "/.zcompdump' && source '" + script + "' && print -r -- \"registered: ${_comps[lossprobe]}\" && "
            + "setopt KSH_ARRAYS && COMP_WORDS=(lossprobe run --transport '') && COMP_CWORD=3 && "
            + "COMP_LINE='lossprobe run --transport ' && COMP_POINT=${#COMP_LINE} && _complete_lossprobe && "
            + "print -r -- \"words: ${COMPREPLY[*]}\""));
        assertThat(r.exit()).as(r.output()).isZero();
        assertThat(r.output().lines()).containsExactly("registered: _bash_complete -F _complete_lossprobe -o default",
            "words: udp tcp aeron");
    }

    /** What bash completes after {@code words} (the last one is the word being completed). */
    private static List<String> complete(String... words) throws Exception {
        StringBuilder array = new StringBuilder();
        for (String w : words) {
            array.append(" '").append(w).append('\'');
        }
        String line = "lossprobe " + String.join(" ", words);
        Exec r = exec(List.of("/bin/bash", "-c", "source '" + out.resolve("share/bash-completion/completions/lossprobe")
            + "' 2>/dev/null; cd '" + out + "'; COMP_WORDS=(lossprobe" + array + "); COMP_CWORD=" + words.length
            + "; COMP_LINE='" + line + "'; COMP_POINT=" + line.length() + "; _complete_lossprobe lossprobe '"
            + words[words.length - 1] + "' '" + (words.length > 1 ? words[words.length - 2] : "lossprobe")
            + "' 2>/dev/null; printf '%s\\n' \"${COMPREPLY[@]}\""));
        return r.output().lines().filter(l -> !l.isBlank()).toList();
    }

    @Test
    void completionOffersTheWordsOfEveryEnumeratedOptionAndFilesForFileOptions() throws Exception {
        assumeTrue(Files.isExecutable(Path.of("/bin/bash")), "no bash");
        assertThat(complete("run", "--transport", "")).containsExactly("udp", "tcp", "aeron");
        assertThat(complete("run", "--mode", "")).containsExactly("stream", "echo");
        assertThat(complete("run", "--timing", "")).containsExactly("default", "precision");
        assertThat(complete("run", "--udp-io", "")).containsExactly("auto", "epoll", "nio");
        assertThat(complete("run", "--search", "")).containsExactly("ndr", "pdr");
        assertThat(complete("run", "--pattern", "")).containsExactly("constant", "burst:", "poisson", "onoff:");
        assertThat(complete("run", "-X", "aeron.m")).containsExactly("aeron.mtu=");
        assertThat(complete("run", "--probe", "")).containsExactly("echo", "echo:");
        assertThat(complete("mesh", "--pairs", "")).containsExactly("full", "ring", "targets", "sample:");
        assertThat(complete("compare", "--format", "")).containsExactly("text", "md", "json", "html");
        assertThat(complete("report", "--format", "")).containsExactly("html", "md", "csv");
        // File options complete file names (here, in the output directory): share/ is there.
        for (String fileOption : List.of("--output", "--stream", "--secret-file", "--prometheus", "--policy")) {
            assertThat(complete("run", fileOption, "sh")).as(fileOption).containsExactly("share");
        }
        assertThat(complete("mesh", "--hosts-file", "sh")).containsExactly("share");
        assertThat(complete("check", "--baseline", "sh")).containsExactly("share");
    }
}
