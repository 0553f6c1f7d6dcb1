import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import javax.security.auth.kerberos.KerberosPrincipal;

import org.apache.kafka.common.security.kerberos.KerberosName;
import org.apache.kafka.common.security.kerberos.KerberosShortNamer;

/**
 * Kafka's own KerberosShortNamer, for franz's kerberos_name tests.
 *
 * Argument: a file of cases, each some lines "R <rule>" and then a line "N <principal>"; for each,
 * prints on one line "=<short name>", or "!<exception's simple class name>: <message>" (newlines
 * as \n), with the rules read for the default realm REALM.COM.
 * Argument "realm": prints "[<realm>]", the default realm as SaslChannelBuilder finds it.
 */
public class KerberosShortNameOracle {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, "UTF-8");
        if (args[0].equals("realm")) {
            String realm;
            try {
                realm = new KerberosPrincipal("tmp", 1).getRealm();
            } catch (Exception e) {
                realm = "";
            }
            out.println("[" + realm + "]");
            return;
        }
        List<String> rules = new ArrayList<>();
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            if (line.startsWith("R ")) {
                rules.add(line.substring(2));
                continue;
            }
            String result;
            try {
                KerberosShortNamer namer = KerberosShortNamer.fromUnparsedRules("REALM.COM", rules);
                result = "=" + namer.shortName(KerberosName.parse(line.substring(2)));
            } catch (Exception e) {
                result = "!" + e.getClass().getSimpleName() + ": " + e.getMessage();
            }
            out.println(result.replace("\n", "\\n"));
            rules = new ArrayList<>();
        }
    }
}
