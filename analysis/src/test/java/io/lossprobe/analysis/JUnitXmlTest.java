package io.lossprobe.analysis;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;

/**
 * The JUnit file goes to a CI server's XML parser. A control character (an escape sequence, a NUL) or a lone
 * surrogate in a result's transport name is not allowed in XML 1.0, even as a character reference: the CI server
 * refused the whole report. Such characters become U+FFFD; the document parses and says which test failed.
 */
class JUnitXmlTest {
    @TempDir
    Path dir;

    @Test
    void controlCharactersFromAResultDoNotBreakTheXml() throws Exception {
        String hostile = "udp\u0000\u0001\u001b[31m\ud800\uffff<&>\"";
        LoadedResult r = Fixtures.load(dir, "r.json", Fixtures.withStep(1, s -> {
            Fixtures.lose(s, 600);
            s.put("transport", hostile);
        }));
        Policy policy = Policy.read(Files.writeString(dir.resolve("p.json"), "{\"defaults\":{\"maxLossPercent\":0}}"));
        String xml = JUnitXml.render(new PolicyCheck(policy).check(r, Optional.empty()));
        Document doc = DocumentBuilderFactory.newInstance().newDocumentBuilder()
            .parse(new ByteArrayInputStream(xml.getBytes(StandardCharsets.UTF_8)));
        assertThat(doc.getElementsByTagName("failure").getLength()).isPositive();
        String classes = xml.lines().filter(l -> l.contains("\uFFFD")).findFirst().orElseThrow();
        assertThat(classes).contains("lossprobe.udp\uFFFD\uFFFD\uFFFD[31m\uFFFD\uFFFD&lt;&amp;&gt;&quot;");
        assertThat(xml.chars().noneMatch(c -> c < 0x20 && c != '\n')).isTrue();
    }
}
