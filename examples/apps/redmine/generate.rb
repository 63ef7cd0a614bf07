# Realistic data for examples/redmine.toml, generated once into the template every server's trials start from
# (run by make-db.sh with `rails runner`, after Redmine's migrations and default data): users with roles,
# public projects, and issues with descriptions, journals (notes) and attachments, the same every time (a fixed
# seed). An attachment is its metadata only (the row Redmine lists on the issue's page; no page of the scenario
# downloads the file, so none is written).
#   PROJECTS (default 20), ISSUES per project (default 100), USERS (default 10); every user's password is
#   "shootout-bench", so the scenario's writers can log in as user1…userN.
srand(20_261_125)
projects = Integer(ENV.fetch("PROJECTS", "20"))
issues = Integer(ENV.fetch("ISSUES", "100"))
users = Integer(ENV.fetch("USERS", "10"))
words = %w[server worker thread latency queue cache database index request response socket timeout pool
           memory page session cookie token header router template view model migration deploy release]
text = ->(n) { Array.new(n) { words.sample }.join(" ") }

Setting.default_language = "en"
developer = Role.find_by!(name: "Developer")
trackers = Tracker.all.to_a
statuses = IssueStatus.all.to_a
priorities = IssuePriority.all.to_a
attachments = []
ActiveRecord::Base.transaction do
  people = (1..users).map do |i|
    user = User.new(firstname: "User", lastname: i.to_s, mail: "user#{i}@bench.invalid")
    user.login = "user#{i}"
    user.password = user.password_confirmation = "shootout-bench"
    user.save!
    user
  end
  (1..projects).each do |p|
    project = Project.create!(name: "Project #{p}", identifier: "project-#{p}", is_public: true,
                              description: text.call(30), tracker_ids: trackers.map(&:id))
    people.each { |user| Member.create!(project: project, principal: user, role_ids: [developer.id]) }
    (1..issues).each do |n|
      issue = Issue.create!(project: project, tracker: trackers.sample, status: statuses.first,
                            priority: priorities.sample, author: people.sample,
                            subject: "Issue #{n} of project #{p}: #{text.call(5)}", description: text.call(60))
      if n % 4 == 1
        # Sized from the issue's id, not drawn: the rest of the data stays what the seed alone makes.
        attachments << { container_id: issue.id, container_type: "Issue", filename: "trace-#{n}.log",
                         disk_filename: "", filesize: 1_024 + (issue.id * 7_919 % 100_000),
                         content_type: "text/plain", digest: "", downloads: 0, author_id: issue.author_id,
                         created_on: issue.created_on, description: "A trace of issue #{n}" }
      end
      next unless n % 3 == 0

      issue.reload # its nested set was written after the create
      issue.init_journal(people.sample, text.call(20))
      issue.status = statuses.sample
      issue.save!
    end
  end
  Attachment.insert_all!(attachments) unless attachments.empty?
end
puts "generate.rb: #{User.count} users, #{Project.count} projects, #{Issue.count} issues, " \
     "#{Journal.count} journals, #{Attachment.count} attachments"
