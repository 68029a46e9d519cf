package io.lossprobe.cli;

import io.lossprobe.core.result.OutputFiles;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import picocli.AutoComplete;
import picocli.CommandLine;

/**
 * Writes the files of the distribution archive that come from the command model, at build time ({@code mvn package}
 * runs it): a man page per command and the shell completion script (picocli's generator; the same script works in
 * bash and, through bashcompinit, in zsh).
 *
 * <pre>java -cp ... io.lossprobe.cli.DistributionFiles OUT-DIR VERSION TIMESTAMP</pre>
 */
public final class DistributionFiles {
    private DistributionFiles() {
    }

    public static void main(String[] args) throws IOException {
        if (args.length != 3) {
            throw new IllegalArgumentException("usage: DistributionFiles OUT-DIR VERSION TIMESTAMP");
        }
        Path out = Path.of(args[0]);
        String version = args[1];
        // The build's output timestamp (project.build.outputTimestamp, ISO 8601): the pages' date, reproducibly.
        String date = args[2].length() >= 10 ? args[2].substring(0, 10) : args[2];
        CommandLine top = LossprobeCommand.commandLine();
        Path man = Files.createDirectories(out.resolve("share/man/man1"));
        int pages = writePages(top, man, version, date);
        String completion = AutoComplete.bash("lossprobe", top);
        Path bash = Files.createDirectories(out.resolve("share/bash-completion/completions"));
        OutputFiles.write(bash.resolve("lossprobe"), completion.getBytes(StandardCharsets.UTF_8));
        Path zsh = Files.createDirectories(out.resolve("share/zsh"));
        OutputFiles.write(zsh.resolve("lossprobe.zsh"), ("# lossprobe completion for zsh: source this file from "
            + "~/.zshrc. It is the bash script, which\n# loads zsh's bashcompinit itself when it runs in zsh.\n"
            + completion).getBytes(StandardCharsets.UTF_8));
        System.out.println("distribution files: " + pages + " man pages and the completion script in " + out);
    }

    private static int writePages(CommandLine cl, Path dir, String version, String date) throws IOException {
        if (cl.getCommandName().equals("help") || cl.getCommandSpec().usageMessage().hidden()) {
            return 0;
        }
        OutputFiles.write(dir.resolve(ManPage.fileName(cl)),
            ManPage.render(cl, version, date).getBytes(StandardCharsets.UTF_8));
        int pages = 1;
        for (CommandLine sub : cl.getSubcommands().values()) {
            pages += writePages(sub, dir, version, date);
        }
        return pages;
    }
}
