import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;

/**
 * What a JDBC client does at Tally's analyst door: connect (the driver sends its own settings),
 * query, bind a parameter, read the catalogue as DBeaver does, and meet a refusal. One line of
 * output per step, read by test/sql/analyst-door-jdbc.test.ts.
 */
public class Probe {
  public static void main(String[] args) throws Exception {
    Properties properties = new Properties();
    properties.setProperty("user", args[1]);
    properties.setProperty("password", args[2]);
    try (Connection connection = DriverManager.getConnection(args[0], properties)) {
      try (Statement statement = connection.createStatement();
          ResultSet rows = statement.executeQuery("SELECT count() FROM request_response_rmt FINAL")) {
        rows.next();
        System.out.println("count " + rows.getLong(1));
      }
      try (PreparedStatement statement = connection.prepareStatement("SELECT ? + 1")) {
        statement.setInt(1, 41);
        try (ResultSet rows = statement.executeQuery()) {
          rows.next();
          System.out.println("parameter " + rows.getInt(1));
        }
      }
      DatabaseMetaData metadata = connection.getMetaData();
      try (ResultSet tables = metadata.getTables(null, null, "request_response_rmt", null)) {
        System.out.println("table " + (tables.next() ? tables.getString("TABLE_NAME") : "none"));
      }
      try (ResultSet columns = metadata.getColumns(null, null, "request_response_rmt", "model")) {
        System.out.println("column " + (columns.next() ? columns.getString("COLUMN_NAME") : "none"));
      }
      try (Statement statement = connection.createStatement()) {
        statement.executeQuery("SELECT file('/etc/passwd')");
        System.out.println("refused no");
      } catch (SQLException refused) {
        System.out.println("refused " + refused.getMessage().replace('\n', ' '));
      }
    }
  }
}
