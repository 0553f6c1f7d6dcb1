// Kafka's Java Admin client against a broker with an authorizer: creates, describes and deletes
// ACLs, printing one line per outcome for tests/server/test_acl_apis.py to compare.
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ExecutionException;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.CreateAclsResult;
import org.apache.kafka.common.KafkaFuture;
import org.apache.kafka.common.acl.AccessControlEntry;
import org.apache.kafka.common.acl.AccessControlEntryFilter;
import org.apache.kafka.common.acl.AclBinding;
import org.apache.kafka.common.acl.AclBindingFilter;
import org.apache.kafka.common.acl.AclOperation;
import org.apache.kafka.common.acl.AclPermissionType;
import org.apache.kafka.common.resource.PatternType;
import org.apache.kafka.common.resource.ResourcePattern;
import org.apache.kafka.common.resource.ResourcePatternFilter;
import org.apache.kafka.common.resource.ResourceType;

public class AclAdminDriver {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        props.put("bootstrap.servers", args[0]);
        props.put("default.api.timeout.ms", "30000");
        try (Admin admin = Admin.create(props)) {
            List<AclBinding> bindings = List.of(
                binding(ResourceType.TOPIC, "foo", PatternType.LITERAL, "User:alice", AclOperation.READ,
                    AclPermissionType.ALLOW),
                binding(ResourceType.TOPIC, "pre", PatternType.PREFIXED, "User:*", AclOperation.WRITE,
                    AclPermissionType.DENY),
                binding(ResourceType.CLUSTER, "my-cluster", PatternType.LITERAL, "User:alice", AclOperation.ALTER,
                    AclPermissionType.ALLOW),
                binding(ResourceType.GROUP, "g", PatternType.LITERAL, "alice", AclOperation.READ,
                    AclPermissionType.ALLOW));
            CreateAclsResult created = admin.createAcls(bindings);
            for (AclBinding binding : bindings) {
                String name = binding.pattern().name();
                System.out.println("create " + name + ": " + outcome(created.values().get(binding)));
            }
            List<String> described = new ArrayList<>();
            for (AclBinding binding : admin.describeAcls(AclBindingFilter.ANY).values().get()) {
                described.add(binding.toString());
            }
            described.sort(null);
            for (String line : described) {
                System.out.println("describe " + line);
            }
            AclBindingFilter match = new AclBindingFilter(
                new ResourcePatternFilter(ResourceType.TOPIC, "prefix", PatternType.MATCH),
                AccessControlEntryFilter.ANY);
            Collection<AclBinding> deleted = admin.deleteAcls(List.of(match)).all().get();
            for (AclBinding binding : deleted) {
                System.out.println("delete " + binding);
            }
            System.out.println("left " + admin.describeAcls(AclBindingFilter.ANY).values().get().size());
        }
    }

    static AclBinding binding(ResourceType type, String name, PatternType patternType, String principal,
                              AclOperation operation, AclPermissionType permission) {
        return new AclBinding(new ResourcePattern(type, name, patternType),
            new AccessControlEntry(principal, "*", operation, permission));
    }

    static String outcome(KafkaFuture<Void> future) throws InterruptedException {
        try {
            future.get();
            return "ok";
        } catch (ExecutionException e) {
            return e.getCause().getClass().getSimpleName() + ": " + e.getCause().getMessage();
        }
    }
}
