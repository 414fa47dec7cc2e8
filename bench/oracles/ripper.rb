# Ruby's own parser (Ripper) as an independent oracle for gitmem's Ruby symbols.
# stdin: a Ruby source file. stdout: JSON {qualified name => canonical s-expression}.
# The s-expression is Ripper.sexp's subtree of the definition with every [line, column] position
# removed: comments and whitespace are not in it. Names follow gitmem's rules (docs/how-it-works.md):
# modules and classes nest with "." (class A::B is A.B), methods C.m, def self.x / class << self
# members C.x (C.x[self] when C also has an instance method x), top-level defs by their name,
# a second definition of one name in the file NAME#2, #3 ...
require 'ripper'
require 'json'

def strip_pos(node)
  return node unless node.is_a?(Array)
  if node.length == 2 && node.all? { |x| x.is_a?(Integer) }
    return nil
  end
  node.map { |x| strip_pos(x) }.compact
end

def const_name(node)
  case node[0]
  when :const_ref, :top_const_ref then node[1][1]
  when :var_ref then node[1][1]
  when :const_path_ref then "#{const_name(node[1])}.#{node[2][1]}"
  when :@const then node[1]
  else nil
  end
end

def meth_name(node)
  node.is_a?(Array) && node[0].to_s.start_with?('@') ? node[1] : nil
end

$out = []  # [name, kind(:inst/:self/:ns/:fn), sexp]
$seen = Hash.new(0)

# A second definition of a name in the file is NAME#2 (its members nest under NAME#2, as gitmem names them).
def numbered(q)
  $seen[q] += 1
  $seen[q] > 1 ? "#{q}##{$seen[q]}" : q
end

def walk(node, prefix, in_sclass)
  return unless node.is_a?(Array)
  if node[0].is_a?(Symbol)
    case node[0]
    when :module, :class
      n = const_name(node[1])
      if n
        q = numbered(prefix.empty? ? n : "#{prefix}.#{n}")
        $out << [q, :ns, node]
        walk(node[-1], q, false)
        return
      end
    when :sclass
      if node[1].is_a?(Array) && node[1][0] == :var_ref && node[1][1][1] == 'self'
        walk(node[2], prefix, true)
        return
      end
    when :def
      n = meth_name(node[1])
      if n
        q = prefix.empty? ? n : "#{prefix}.#{n}"
        $out << [q, in_sclass ? :self : (prefix.empty? ? :fn : :inst), node]
        return
      end
    when :defs
      n = meth_name(node[3])
      if n && node[1].is_a?(Array) && node[1][0] == :var_ref && node[1][1][1] == 'self'
        q = prefix.empty? ? n : "#{prefix}.#{n}"
        $out << [q, :self, node]
        return
      end
    end
    node[1..].each { |c| walk(c, prefix, in_sclass) }
  else
    node.each { |c| walk(c, prefix, in_sclass) }
  end
end

src = $stdin.read
tree = Ripper.sexp(src)
if tree.nil?
  warn 'ripper: syntax error'
  exit 2
end
walk(tree, '', false)
inst = {}
$out.each { |q, k, _| inst[q] = true if k == :inst || k == :fn }
result = {}
seen = Hash.new(0)
$out.each do |q, k, node|
  name = q
  name = "#{q}[self]" if k == :self && inst[q]
  if k != :ns
    seen[name] += 1
    name = "#{name}##{seen[name]}" if seen[name] > 1
  end
  result[name] = JSON.generate(strip_pos(node))
end
puts JSON.generate(result)
