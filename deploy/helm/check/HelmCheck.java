import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.gson.annotations.SerializedName;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.custom.Quantity;
import io.kubernetes.client.openapi.JSON;
import io.kubernetes.client.openapi.models.V1Deployment;
import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.openapi.models.V1PodDisruptionBudget;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceAccount;
import io.kubernetes.client.openapi.models.V2HorizontalPodAutoscaler;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.snakeyaml.engine.v2.api.Dump;
import org.snakeyaml.engine.v2.api.DumpSettings;
import org.snakeyaml.engine.v2.api.Load;
import org.snakeyaml.engine.v2.api.LoadSettings;

/**
 * The chart's check (npm run check:helm): Helm's own code (helm-java embeds Helm 3 as a native
 * library) lints the chart strictly and renders it with each example values file; every rendered
 * manifest is then checked against the Kubernetes API's types (the official Java client's models,
 * generated from the Kubernetes OpenAPI document): unknown fields, missing required fields, a
 * value of the wrong JSON type, a malformed quantity all fail. Then what Tally needs of it: one
 * Deployment per role with probes on /livez and /readyz where that role serves them, credentials
 * only from Secrets, budgets and autoscalers that select what exists. Values files under refused/
 * must make the chart refuse to render, with the message their first line names.
 *
 * Usage: java -cp CLASSPATH HelmCheck.java CHART_DIR CHECK_DIR
 */
@SuppressWarnings("unchecked")
public class HelmCheck {
  static final Map<String, Class<?>> SCHEMAS =
      Map.of(
          "apps/v1 Deployment", V1Deployment.class,
          "v1 Service", V1Service.class,
          "v1 ServiceAccount", V1ServiceAccount.class,
          "policy/v1 PodDisruptionBudget", V1PodDisruptionBudget.class,
          "autoscaling/v2 HorizontalPodAutoscaler", V2HorizontalPodAutoscaler.class,
          "networking.k8s.io/v1 Ingress", V1Ingress.class);
  static final List<String> ROLES = List.of("api", "ingest", "dispatcher", "exporter");
  /** Variables that hold credentials, never a plain value: the names values.schema.json lets secretEnv take. */
  static Set<String> CREDENTIALS;
  static final Pattern SCIENTIFIC = Pattern.compile("-?\\d+(\\.\\d+)?[eE][+-]?\\d+");
  static final Pattern URL_WITH_PASSWORD = Pattern.compile("://[^/@\\s]+:[^/@\\s]+@");

  static final List<String> failures = new ArrayList<>();

  public static void main(String[] args) throws Exception {
    long started = System.nanoTime();
    Path chart = Path.of(args[0]).toAbsolutePath().normalize();
    Path check = Path.of(args[1]).toAbsolutePath().normalize();
    System.out.println("helm check: Helm " + Helm.version().call() + " (helm-java), chart " + chart.getFileName());

    credentials(chart);
    validatorRefusesBrokenManifests();

    List<Path> valuesFiles = list(chart.resolve("examples"));
    int manifests = 0;
    for (Path values : valuesFiles) {
      String name = chart.getParent().relativize(values).toString();
      lint(chart, values, name);
      String rendered;
      try {
        rendered = render(chart, values);
      } catch (RuntimeException e) {
        fail(name + ": helm template failed: " + e.getMessage());
        continue;
      }
      List<Map<String, Object>> docs;
      try {
        docs = documents(rendered);
      } catch (RuntimeException e) {
        fail(name + ": helm template rendered no valid YAML: " + e.getMessage());
        continue;
      }
      for (Map<String, Object> doc : docs) validate(name, doc);
      tallyNeeds(name, docs);
      manifests += docs.size();
      System.out.println("helm check: " + name + ": lint --strict clean, " + docs.size() + " manifests valid");
    }

    List<Path> refused = list(check.resolve("refused"));
    for (Path values : refused) {
      String name = check.getParent().relativize(values).toString();
      String expected = Files.readAllLines(values).get(0).replaceFirst("^#\\s*expect:\\s*", "").trim();
      try {
        render(chart, values);
        fail(name + ": rendered, but must be refused with \"" + expected + "\"");
      } catch (RuntimeException e) {
        if (e.getMessage() == null || !e.getMessage().contains(expected))
          fail(name + ": refused, but not with \"" + expected + "\": " + e.getMessage());
      }
    }

    long ms = (System.nanoTime() - started) / 1_000_000;
    if (!failures.isEmpty()) {
      System.err.println("helm check: FAILED (" + failures.size() + "):");
      failures.forEach(f -> System.err.println("  " + f));
      System.exit(1);
    }
    System.out.printf(
        "helm check: %d values files, %d manifests valid, %d refusals as expected, in %d ms%n",
        valuesFiles.size(), manifests, refused.size(), ms);
  }

  /**
   * The credentials, from the schema; values.yaml must list each under secretEnv (so that every
   * render passes them all through the chart's tally.secretRoles, which refuses one it lacks).
   */
  static void credentials(Path chart) throws IOException {
    Load load = new Load(LoadSettings.builder().build());
    Object schema = load.loadFromString(Files.readString(chart.resolve("values.schema.json")));
    List<String> names = at(schema, "properties", "secretEnv", "propertyNames", "enum");
    CREDENTIALS = Set.copyOf(names);
    Map<String, Object> listed = at(load.loadFromString(Files.readString(chart.resolve("values.yaml"))), "secretEnv");
    if (!listed.keySet().equals(CREDENTIALS))
      fail("values.yaml secretEnv lists " + listed.keySet() + ", values.schema.json " + CREDENTIALS);
  }

  static void fail(String message) {
    failures.add(message);
  }

  static List<Path> list(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
    }
  }

  static String render(Path chart, Path values) {
    return new Helm(chart).template().withName("tally").withNamespace("tally").withValuesFile(values).call();
  }

  /**
   * helm lint takes the chart's own values.yaml only: so each values file is linted on a copy of
   * the chart whose values.yaml is the chart's merged with it, as Helm merges them.
   */
  @SuppressWarnings("unchecked")
  static void lint(Path chart, Path values, String name) throws IOException {
    Path copy = Files.createTempDirectory("helm-check-").resolve(chart.getFileName());
    try {
      try (Stream<Path> tree = Files.walk(chart)) {
        for (Path p : tree.toList()) {
          Path to = copy.resolve(chart.relativize(p).toString());
          if (Files.isDirectory(p)) Files.createDirectories(to);
          else Files.copy(p, to);
        }
      }
      Load load = new Load(LoadSettings.builder().build());
      Map<String, Object> merged = (Map<String, Object>) load.loadFromString(Files.readString(chart.resolve("values.yaml")));
      merge(merged, (Map<String, Object>) load.loadFromString(Files.readString(values)));
      Files.writeString(copy.resolve("values.yaml"), new Dump(DumpSettings.builder().build()).dumpToString(merged));
      LintResult result = new Helm(copy).lint().strict().call();
      for (String m : result.getMessages())
        if (!m.startsWith("[INFO]") || result.isFailed()) System.out.println("helm check: " + name + ": lint: " + m);
      if (result.isFailed()) fail(name + ": helm lint --strict failed: " + result.getMessages());
    } finally {
      try (Stream<Path> tree = Files.walk(copy.getParent())) {
        tree.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
  }

  @SuppressWarnings("unchecked")
  static void merge(Map<String, Object> into, Map<String, Object> from) {
    if (from == null) return;
    from.forEach(
        (k, v) -> {
          if (v instanceof Map && into.get(k) instanceof Map)
            merge((Map<String, Object>) into.get(k), (Map<String, Object>) v);
          else into.put(k, v);
        });
  }

  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> documents(String rendered) {
    List<Map<String, Object>> docs = new ArrayList<>();
    for (Object doc : new Load(LoadSettings.builder().build()).loadAllFromString(rendered))
      if (doc != null) docs.add((Map<String, Object>) doc);
    return docs;
  }

  // ---- Schema: the Kubernetes API's types ----

  /** Problems with one manifest; empty when it is valid. */
  static List<String> schemaProblems(Map<String, Object> doc) {
    List<String> problems = new ArrayList<>();
    String id = doc.get("apiVersion") + " " + doc.get("kind");
    Class<?> type = SCHEMAS.get(id);
    if (type == null) {
      problems.add("no schema for " + id + " (add its class to SCHEMAS)");
      return problems;
    }
    JsonElement json = toJson(doc);
    strict(json, type, "", problems);
    try {
      // Required fields and unknown ones, as the generated model checks them, then the values.
      type.getMethod("validateJsonElement", JsonElement.class).invoke(null, json);
      JSON.getGson().fromJson(json, type);
    } catch (java.lang.reflect.InvocationTargetException e) {
      problems.add(e.getCause().getMessage());
    } catch (Exception e) {
      problems.add(e.toString());
    }
    return problems;
  }

  static void validate(String file, Map<String, Object> doc) {
    for (String p : schemaProblems(doc)) fail(file + ": " + doc.get("kind") + " " + name(doc) + ": " + p);
  }

  /** Every field known to its type, and of the JSON type the type's field takes. */
  static void strict(JsonElement e, Type type, String path, List<String> problems) {
    if (e.isJsonNull()) return;
    if (type instanceof ParameterizedType pt) {
      Class<?> raw = (Class<?>) pt.getRawType();
      Type item = pt.getActualTypeArguments()[pt.getActualTypeArguments().length - 1];
      if (List.class.isAssignableFrom(raw)) {
        if (!e.isJsonArray()) problems.add(path + ": must be a list");
        else for (int i = 0; i < e.getAsJsonArray().size(); i++) strict(e.getAsJsonArray().get(i), item, path + "[" + i + "]", problems);
      } else if (Map.class.isAssignableFrom(raw)) {
        if (!e.isJsonObject()) problems.add(path + ": must be a map");
        else for (var entry : e.getAsJsonObject().entrySet()) strict(entry.getValue(), item, path + "." + entry.getKey(), problems);
      }
      return;
    }
    Class<?> c = (Class<?>) type;
    if (c == String.class || c == OffsetDateTime.class) {
      if (!(e.isJsonPrimitive() && e.getAsJsonPrimitive().isString())) problems.add(path + ": must be a string, is " + e);
    } else if (c == Integer.class || c == Long.class) {
      if (!(e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber()) || e.getAsBigDecimal().stripTrailingZeros().scale() > 0)
        problems.add(path + ": must be an integer, is " + e);
    } else if (c == Double.class || c == Float.class || c == java.math.BigDecimal.class) {
      if (!(e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber())) problems.add(path + ": must be a number, is " + e);
    } else if (c == Boolean.class) {
      if (!(e.isJsonPrimitive() && e.getAsJsonPrimitive().isBoolean())) problems.add(path + ": must be true or false, is " + e);
    } else if (c == IntOrString.class) {
      if (!e.isJsonPrimitive() || e.getAsJsonPrimitive().isBoolean()) problems.add(path + ": must be an integer or a string, is " + e);
    } else if (c == Quantity.class) {
      try {
        Quantity.fromString(e.getAsString());
      } catch (RuntimeException ex) {
        problems.add(path + ": not a quantity: " + e);
      }
    } else if (c.getName().startsWith("io.kubernetes.client.openapi.models.")) {
      if (!e.isJsonObject()) {
        problems.add(path + ": must be an object (" + c.getSimpleName() + "), is " + e);
        return;
      }
      Map<String, Field> fields = new LinkedHashMap<>();
      for (Field f : c.getDeclaredFields()) {
        SerializedName n = f.getAnnotation(SerializedName.class);
        if (n != null) fields.put(n.value(), f);
      }
      for (var entry : e.getAsJsonObject().entrySet()) {
        Field f = fields.get(entry.getKey());
        if (f == null) problems.add(path + "." + entry.getKey() + ": unknown field of " + c.getSimpleName());
        else strict(entry.getValue(), f.getGenericType(), path + "." + entry.getKey(), problems);
      }
    }
    // Object and the like: free-form in the API (e.g. x-kubernetes-preserve-unknown-fields).
  }

  @SuppressWarnings("unchecked")
  static JsonElement toJson(Object o) {
    if (o == null) return JsonNull.INSTANCE;
    if (o instanceof Map<?, ?> m) {
      JsonObject obj = new JsonObject();
      ((Map<Object, Object>) m).forEach((k, v) -> obj.add(String.valueOf(k), toJson(v)));
      return obj;
    }
    if (o instanceof List<?> l) {
      JsonArray arr = new JsonArray();
      l.forEach(v -> arr.add(toJson(v)));
      return arr;
    }
    if (o instanceof Number n) return new JsonPrimitive(n);
    if (o instanceof Boolean b) return new JsonPrimitive(b);
    return new JsonPrimitive(String.valueOf(o));
  }

  /** The schema check itself is checked: each of these must be refused, the first accepted. */
  static void validatorRefusesBrokenManifests() {
    String good =
        """
        apiVersion: apps/v1
        kind: Deployment
        metadata: {name: x}
        spec:
          selector: {matchLabels: {a: b}}
          template:
            metadata: {labels: {a: b}}
            spec:
              containers:
                - name: x
                  image: x
                  env: [{name: PORT, value: "8787"}]
                  livenessProbe: {httpGet: {path: /livez, port: http}}
                  resources: {limits: {memory: 1Gi}}
        """;
    Map<String, String> broken =
        Map.of(
            "an unknown field", good.replace("httpGet: {path", "httpGet: {paths"),
            "a number where a string goes", good.replace("value: \"8787\"", "value: 8787"),
            "a malformed quantity", good.replace("memory: 1Gi", "memory: 1Gx"),
            "a missing required field", good.replace("- name: x\n          image: x", "- image: x"),
            "a string where an integer goes", good.replace("spec:\n  selector", "spec:\n  replicas: two\n  selector"),
            "an unknown kind", good.replace("kind: Deployment", "kind: Deploymnet"));
    List<String> problems = schemaProblems(documents(good).get(0));
    if (!problems.isEmpty()) fail("schema check: refuses a valid Deployment: " + problems);
    broken.forEach(
        (what, yaml) -> {
          if (schemaProblems(documents(yaml).get(0)).isEmpty())
            fail("schema check: accepts a Deployment with " + what);
        });
    System.out.println("helm check: the schema check refuses " + broken.size() + " broken manifests and takes a valid one");
  }

  // ---- What Tally needs of the manifests ----

  @SuppressWarnings("unchecked")
  static <T> T at(Object o, String... path) {
    for (String key : path) {
      if (!(o instanceof Map)) return null;
      o = ((Map<String, Object>) o).get(key);
    }
    return (T) o;
  }

  static String name(Map<String, Object> doc) {
    return at(doc, "metadata", "name");
  }

  static boolean selects(Map<String, Object> selector, Map<String, Object> labels) {
    return selector != null && !selector.isEmpty() && labels != null && labels.entrySet().containsAll(selector.entrySet());
  }

  static void tallyNeeds(String file, List<Map<String, Object>> docs) {
    List<Map<String, Object>> deployments = docs.stream().filter(d -> "Deployment".equals(d.get("kind"))).toList();
    Set<String> roles = new HashSet<>();
    for (Map<String, Object> d : deployments) {
      String role = at(d, "metadata", "labels", "app.kubernetes.io/component");
      roles.add(role);
      String where = file + ": Deployment " + name(d);
      if (!selects(at(d, "spec", "selector", "matchLabels"), at(d, "spec", "template", "metadata", "labels")))
        fail(where + ": its selector does not select its own pods");
      List<Map<String, Object>> containers = at(d, "spec", "template", "spec", "containers");
      Map<String, Object> c = containers.get(0);
      List<String> command = at(c, "command");
      if (command == null || !command.equals(List.of("node", "services/" + role + "/main.ts")))
        fail(where + ": runs " + command + ", not services/" + role + "/main.ts");
      Map<String, Object> env = new LinkedHashMap<>();
      for (Map<String, Object> e : (List<Map<String, Object>>) at(c, "env")) {
        String n = (String) e.get("name");
        if (env.put(n, e) != null) fail(where + ": " + n + " is set twice");
        if (e.containsKey("value") && (CREDENTIALS.contains(n) || URL_WITH_PASSWORD.matcher(String.valueOf(e.get("value"))).find()))
          fail(where + ": " + n + " holds a credential as a plain value; it must come from a Secret");
        if (e.get("value") instanceof String v && SCIENTIFIC.matcher(v).matches())
          fail(where + ": " + n + " is " + v + ", a number Helm printed as a float; Tally reads integers");
        if (CREDENTIALS.contains(n) && at(e, "valueFrom", "secretKeyRef") == null)
          fail(where + ": " + n + " is not from a Secret");
      }
      // Where the role serves /livez and /readyz: the API on PORT, the others on TALLY_METRICS_PORT.
      String portVar = role.equals("api") ? "PORT" : "TALLY_METRICS_PORT";
      Object portValue = at(env.get(portVar), "value");
      if (portValue == null) fail(where + ": " + portVar + " is not set: the role would serve no /livez and /readyz");
      Map<String, Object> ports = new LinkedHashMap<>();
      for (Map<String, Object> p : (List<Map<String, Object>>) at(c, "ports")) ports.put((String) p.get("name"), p.get("containerPort"));
      for (String[] probe : new String[][] {{"livenessProbe", "/livez"}, {"readinessProbe", "/readyz"}, {"startupProbe", "/livez"}}) {
        Map<String, Object> get = at(c, probe[0], "httpGet");
        if (get == null || !probe[1].equals(get.get("path"))) {
          fail(where + ": " + probe[0] + " is not GET " + probe[1]);
          continue;
        }
        Object port = ports.getOrDefault(String.valueOf(get.get("port")), get.get("port"));
        if (portValue != null && !String.valueOf(port).equals(String.valueOf(portValue)))
          fail(where + ": " + probe[0] + " probes port " + port + " but " + portVar + " is " + portValue);
      }
      if (at(c, "resources", "limits", "memory") == null) fail(where + ": no memory limit");
      if (at(d, "spec", "template", "spec", "automountServiceAccountToken") != Boolean.FALSE)
        fail(where + ": mounts a service account token it never uses");
    }
    if (!roles.equals(new HashSet<>(ROLES))) fail(file + ": Deployments for " + roles + ", not one for each of " + ROLES);

    for (Map<String, Object> d : docs) {
      String kind = (String) d.get("kind");
      String where = file + ": " + kind + " " + name(d);
      if (kind.equals("PodDisruptionBudget") || kind.equals("Service")) {
        Map<String, Object> selector = kind.equals("Service") ? at(d, "spec", "selector") : at(d, "spec", "selector", "matchLabels");
        long n = deployments.stream().filter(x -> selects(selector, at(x, "spec", "template", "metadata", "labels"))).count();
        if (n != 1) fail(where + ": selects the pods of " + n + " Deployments, not 1");
      }
      if (kind.equals("HorizontalPodAutoscaler")) {
        String target = at(d, "spec", "scaleTargetRef", "name");
        var scaled = deployments.stream().filter(x -> name(x).equals(target)).findFirst();
        if (scaled.isEmpty()) fail(where + ": scales " + target + ", which is not rendered");
        else if (at(scaled.get(), "spec", "replicas") != null)
          fail(where + ": " + target + " also sets spec.replicas, which each upgrade would reset");
      }
    }
  }
}
