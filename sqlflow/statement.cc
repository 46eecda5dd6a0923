#include "sqlflow/statement.h"

#include <algorithm>
#include <cctype>

#include "sqlflow/lexer.h"

namespace edl::sqlflow {
namespace {

using Kind = Token::Kind;

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

std::string Trim(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

// A JSON string literal.
std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// Recursive descent over one statement's tokens [at, end) (end is a ';' or
// the kEnd token).
class Parser {
 public:
  Parser(const std::string& text, const std::vector<Token>& tokens, size_t begin, size_t end)
      : text_(text), t_(tokens), at_(begin), end_(end) {}

  Result<Statement> Parse() {
    Statement s;
    s.where_at = Where(Peek());
    s.text = Trim(text_.substr(t_[at_].begin, t_[end_].begin - t_[at_].begin));
    EDL_RETURN_IF_ERROR(Expect("SELECT"));
    const size_t list_begin = at_;
    while (!AtEnd() && !(Depth0() && Peek().Is("FROM"))) Advance();
    if (AtEnd()) return Expected("FROM and a table after the SELECT list");
    if (at_ == list_begin) return Expected("a SELECT list");
    s.select_list = Trim(text_.substr(t_[list_begin].begin, Peek().begin - t_[list_begin].begin));
    Advance();  // FROM
    EDL_ASSIGN_OR_RETURN(s.table, Name("a table name after FROM"));
    if (Peek().IsSymbol(".")) {
      Advance();
      EDL_ASSIGN_OR_RETURN(std::string table, Name("a table name after '.'"));
      s.table += "." + table;
    }
    const size_t extension = FindExtension();
    if (Peek().Is("WHERE")) {
      Advance();
      const size_t where_begin = at_;
      while (at_ < extension && !(Depth0() && Peek().Is("LIMIT"))) Advance();
      if (at_ == where_begin) return Expected("a condition after WHERE");
      s.filter = Trim(text_.substr(t_[where_begin].begin, Peek().begin - t_[where_begin].begin));
    }
    if (Peek().Is("LIMIT")) {
      Advance();
      if (Peek().kind != Kind::kNumber ||
          Peek().text.find_first_not_of("0123456789") != std::string::npos) {
        return Expected("a row count after LIMIT");
      }
      s.limit = std::stoll(Peek().text);
      Advance();
    }
    if (at_ != extension || extension == end_) {
      if (Peek().Is("TO") && !AtEnd()) {
        Advance();
        return Expected("TRAIN, PREDICT or EVALUATE after TO");
      }
      if (extension == end_ && at_ == end_) {
        return Expected("TO TRAIN, TO PREDICT, TO EVALUATE or INTO after the SELECT");
      }
      return Expected(
          "WHERE, LIMIT or TO after the table (edl sql reads SELECT ... FROM one table "
          "[WHERE ...] [LIMIT n])");
    }
    if (Peek().Is("TO")) {
      Advance();
      if (Peek().Is("TRAIN")) {
        Advance();
        s.kind = Statement::Kind::kTrain;
        EDL_RETURN_IF_ERROR(TrainClauses(&s));
      } else if (Peek().Is("PREDICT")) {
        Advance();
        s.kind = Statement::Kind::kPredict;
        EDL_RETURN_IF_ERROR(PredictClauses(&s));
      } else if (Peek().Is("EVALUATE")) {
        Advance();
        s.kind = Statement::Kind::kEvaluate;
        EDL_ASSIGN_OR_RETURN(s.model, Name("the name of a trained model after TO EVALUATE"));
        EDL_RETURN_IF_ERROR(With(&s));
        EDL_RETURN_IF_ERROR(LabelInto(&s, "a result table name after INTO"));
      } else {
        return Expected("TRAIN, PREDICT or EVALUATE after TO");
      }
    } else {
      s.kind = Statement::Kind::kTrain;  // the seed form: a default model
      EDL_RETURN_IF_ERROR(LabelInto(&s, "a model name after INTO"));
    }
    if (!AtEnd()) return Expected("the end of the statement");
    return s;
  }

 private:
  const Token& Peek() const { return t_[at_]; }
  bool AtEnd() const { return at_ >= end_; }
  bool Depth0() const { return depth_ == 0; }
  void Advance() {
    if (AtEnd()) return;
    if (Peek().IsSymbol("(") || Peek().IsSymbol("[")) ++depth_;
    if (Peek().IsSymbol(")") || Peek().IsSymbol("]")) --depth_;
    ++at_;
  }

  Status Expected(const std::string& what) const {
    const Token& t = AtEnd() ? t_[end_] : Peek();
    const std::string found = AtEnd() ? "the end of the statement" : t.Describe();
    return InvalidArgument(Where(t) + ": expected " + what + ", found " + found);
  }

  Status Expect(const char* keyword) {
    if (!Peek().Is(keyword) || AtEnd()) return Expected(keyword);
    Advance();
    return Status::Ok();
  }

  Result<std::string> Name(const std::string& what) {
    if (AtEnd() || (Peek().kind != Kind::kIdentifier && Peek().kind != Kind::kQuotedIdentifier)) {
      return Expected(what);
    }
    std::string n = Peek().text;
    Advance();
    return n;
  }

  // Where the extended clause starts: the first TO TRAIN/PREDICT/EVALUATE
  // outside parentheses after the table, else the seed form's trailing
  // [LABEL col] INTO name; end_ when there is neither.
  size_t FindExtension() const {
    int depth = 0;
    for (size_t i = at_; i < end_; ++i) {
      if (t_[i].IsSymbol("(")) ++depth;
      if (t_[i].IsSymbol(")")) --depth;
      if (depth == 0 && t_[i].Is("TO") && i + 1 < end_ &&
          (t_[i + 1].Is("TRAIN") || t_[i + 1].Is("PREDICT") || t_[i + 1].Is("EVALUATE"))) {
        return i;
      }
    }
    auto name = [&](size_t i) {
      return t_[i].kind == Kind::kIdentifier || t_[i].kind == Kind::kQuotedIdentifier;
    };
    if (end_ >= at_ + 2 && t_[end_ - 2].Is("INTO") && name(end_ - 1)) {
      if (end_ >= at_ + 4 && t_[end_ - 4].Is("LABEL") && name(end_ - 3)) return end_ - 4;
      return end_ - 2;
    }
    return end_;
  }

  Status TrainClauses(Statement* s) {
    if (Peek().kind == Kind::kString) {
      s->model = Peek().text;
      s->model_is_file = true;
      Advance();
    } else {
      EDL_ASSIGN_OR_RETURN(s->model, Name("a model after TO TRAIN (DNNClassifier, a zoo model, "
                                          "or a model spec file as a 'string')"));
    }
    EDL_RETURN_IF_ERROR(With(s));
    if (Peek().Is("COLUMN")) {
      Advance();
      for (;;) {
        FeatureColumn c;
        EDL_RETURN_IF_ERROR(Column(&c, /*top=*/true));
        s->columns.push_back(std::move(c));
        if (!Peek().IsSymbol(",")) break;
        Advance();
      }
    }
    return LabelInto(s, "a model name after INTO");
  }

  Status PredictClauses(Statement* s) {
    EDL_ASSIGN_OR_RETURN(s->predict_table, Name("a result table after TO PREDICT (table.column)"));
    if (!Peek().IsSymbol("."))
      return Expected("'.' and the prediction column (TO PREDICT table.column)");
    Advance();
    EDL_ASSIGN_OR_RETURN(s->predict_column, Name("the prediction column after '.'"));
    // schema.table.column
    if (Peek().IsSymbol(".")) {
      Advance();
      s->predict_table += "." + s->predict_column;
      EDL_ASSIGN_OR_RETURN(s->predict_column, Name("the prediction column after '.'"));
    }
    EDL_RETURN_IF_ERROR(With(s));
    EDL_RETURN_IF_ERROR(Expect("USING"));
    EDL_ASSIGN_OR_RETURN(s->using_model, Name("the name of a trained model after USING"));
    return Status::Ok();
  }

  Status LabelInto(Statement* s, const std::string& into_what) {
    if (Peek().Is("LABEL")) {
      Advance();
      EDL_ASSIGN_OR_RETURN(s->label, Name("a column name after LABEL"));
    }
    EDL_RETURN_IF_ERROR(Expect("INTO"));
    EDL_ASSIGN_OR_RETURN(s->into, Name(into_what));
    return Status::Ok();
  }

  Status With(Statement* s) {
    if (!Peek().Is("WITH")) return Status::Ok();
    Advance();
    for (;;) {
      Attribute a;
      a.where = Where(Peek());
      EDL_ASSIGN_OR_RETURN(a.name,
                           Name("an attribute name (model.hidden_units, train.epoch, ...)"));
      while (Peek().IsSymbol(".")) {
        Advance();
        EDL_ASSIGN_OR_RETURN(std::string part, Name("an attribute name after '.'"));
        a.name += "." + part;
      }
      if (!Peek().IsSymbol("=")) return Expected("'=' after attribute " + a.name);
      Advance();
      EDL_ASSIGN_OR_RETURN(a.json, Value());
      s->with.push_back(std::move(a));
      if (!Peek().IsSymbol(",")) return Status::Ok();
      Advance();
    }
  }

  Result<std::string> Value() {
    if (Peek().IsSymbol("[")) {
      Advance();
      std::string out = "[";
      while (!Peek().IsSymbol("]")) {
        EDL_ASSIGN_OR_RETURN(std::string v, Value());
        out += (out.size() > 1 ? ", " : "") + v;
        if (Peek().IsSymbol(",")) {
          Advance();
        } else if (!Peek().IsSymbol("]")) {
          return Expected("',' or ']' in a list");
        }
      }
      Advance();
      return out + "]";
    }
    bool negative = false;
    if (Peek().IsSymbol("-")) {
      negative = true;
      Advance();
    }
    const Token& t = Peek();
    if (t.kind == Kind::kNumber) {
      std::string n = (negative ? "-" : "") + t.text;
      if (n.find('.') == 0 || n.find("-.") == 0) n.insert(n.find('.'), "0");
      if (n.back() == '.') n += "0";
      Advance();
      return n;
    }
    if (negative) return Expected("a number after '-'");
    if (t.kind == Kind::kString || t.kind == Kind::kQuotedIdentifier) {
      std::string v = JsonString(t.text);
      Advance();
      return v;
    }
    if (t.kind == Kind::kIdentifier) {
      std::string v = t.Is("TRUE") ? "true" : t.Is("FALSE") ? "false" : JsonString(t.text);
      Advance();
      return v;
    }
    return Expected("a value (a number, a 'string', true/false or a [list])");
  }

  // One COLUMN expression; `top`: EMBEDDING(...) is allowed.
  Status Column(FeatureColumn* c, bool top) {
    c->where = Where(Peek());
    if (AtEnd() || (Peek().kind != Kind::kIdentifier && Peek().kind != Kind::kQuotedIdentifier)) {
      return Expected(
          "a column or NUMERIC(...), CATEGORY_ID(...), CATEGORY_HASH(...), "
          "BUCKET(...), EMBEDDING(...) after COLUMN");
    }
    const Token& name = Peek();
    if (name.kind == Kind::kQuotedIdentifier || !t_[at_ + 1].IsSymbol("(")) {
      c->kind = FeatureColumn::Kind::kPlain;
      c->column = name.text;
      Advance();
      return Status::Ok();
    }
    const std::string f = Upper(name.text);
    Advance();
    Advance();  // (
    if (f == "EMBEDDING" && top) {
      EDL_RETURN_IF_ERROR(Column(c, /*top=*/false));
      if (c->kind == FeatureColumn::Kind::kNumeric) {
        return InvalidArgument(c->where +
                               ": EMBEDDING takes a categorical column "
                               "(CATEGORY_ID, CATEGORY_HASH or a text column), not NUMERIC");
      }
      EDL_RETURN_IF_ERROR(Comma());
      EDL_ASSIGN_OR_RETURN(c->embedding_dim, Count("the embedding dimension"));
    } else if (f == "NUMERIC") {
      c->kind = FeatureColumn::Kind::kNumeric;
      EDL_ASSIGN_OR_RETURN(c->column, Name("a column name in NUMERIC(...)"));
    } else if (f == "CATEGORY_ID" || f == "CATEGORY_HASH") {
      c->kind = f == "CATEGORY_ID" ? FeatureColumn::Kind::kCategoryId
                                   : FeatureColumn::Kind::kCategoryHash;
      EDL_ASSIGN_OR_RETURN(c->column, Name("a column name in " + f + "(...)"));
      EDL_RETURN_IF_ERROR(Comma());
      EDL_ASSIGN_OR_RETURN(c->buckets, Count("the bucket count of " + f));
    } else if (f == "BUCKET") {
      FeatureColumn inner;
      EDL_RETURN_IF_ERROR(Column(&inner, /*top=*/false));
      if (inner.kind != FeatureColumn::Kind::kNumeric) {
        return InvalidArgument(inner.where + ": BUCKET takes NUMERIC(column)");
      }
      c->kind = FeatureColumn::Kind::kBucket;
      c->column = inner.column;
      EDL_RETURN_IF_ERROR(Comma());
      EDL_ASSIGN_OR_RETURN(c->buckets, Count("the bucket count of BUCKET"));
      if (c->buckets < 2) return InvalidArgument(c->where + ": BUCKET needs at least 2 buckets");
    } else {
      at_ -= 2;
      depth_ -= 1;
      return Expected("NUMERIC, CATEGORY_ID, CATEGORY_HASH, BUCKET" +
                      std::string(top ? " or EMBEDDING" : ""));
    }
    if (!Peek().IsSymbol(")")) return Expected("')' closing " + f + "(...)");
    Advance();
    return Status::Ok();
  }

  Status Comma() {
    if (!Peek().IsSymbol(",")) return Expected("','");
    Advance();
    return Status::Ok();
  }

  Result<int64_t> Count(const std::string& what) {
    const Token& t = Peek();
    if (t.kind != Kind::kNumber || t.text.find_first_not_of("0123456789") != std::string::npos ||
        t.text.size() > 12 || std::stoll(t.text) < 1) {
      return Expected(what + " (a positive integer)");
    }
    const int64_t n = std::stoll(t.text);
    Advance();
    return n;
  }

  const std::string& text_;
  const std::vector<Token>& t_;
  size_t at_;
  size_t end_;
  int depth_ = 0;
};

}  // namespace

Result<std::vector<Statement>> ParseStatements(const std::string& text) {
  EDL_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(text));
  std::vector<Statement> statements;
  size_t begin = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!tokens[i].IsSymbol(";") && tokens[i].kind != Token::Kind::kEnd) continue;
    if (i > begin) {
      Parser p(text, tokens, begin, i);
      EDL_ASSIGN_OR_RETURN(Statement s, p.Parse());
      statements.push_back(std::move(s));
    }
    begin = i + 1;
  }
  if (statements.empty()) return InvalidArgument("line 1, column 1: expected a SELECT statement");
  return statements;
}

}  // namespace edl::sqlflow
